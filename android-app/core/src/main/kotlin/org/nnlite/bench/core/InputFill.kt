package org.nnlite.bench.core

import java.nio.ByteBuffer
import java.nio.ByteOrder
import java.util.Random

/**
 * The fixed seeded input (PROTOCOL.md, "Input"): every input tensor is filled from a fresh
 * java.util.Random(seed) — standard normal floats, integers uniform in
 * [max(type min, -128), min(type max, 127)), booleans uniform — the same ranges as Python's
 * bench.make_input, though not the same values (numpy's generator differs). A quantized integer
 * tensor (scale > 0, e.g. a full-int8 model's input) gets the standard normal sample quantized
 * with its scale and zero point, q = clamp(round(x / scale) + zeroPoint), as make_input does.
 */
object InputFill {
    val DTYPE_SIZES = mapOf(
        "float32" to 4, "int32" to 4, "uint8" to 1, "int64" to 8, "bool" to 1, "int16" to 2, "int8" to 1,
        "float16" to 2, "float64" to 8, "uint16" to 2, "uint32" to 4,
    )

    fun allocate(numBytes: Int): ByteBuffer = ByteBuffer.allocateDirect(numBytes).order(ByteOrder.nativeOrder())

    private val INT_RANGES = mapOf(
        "int8" to (-128L to 127L), "uint8" to (0L to 255L), "int16" to (-32768L to 32767L),
        "uint16" to (0L to 65535L), "int32" to (Int.MIN_VALUE.toLong() to Int.MAX_VALUE.toLong()),
    )

    fun fill(buffer: ByteBuffer, dtype: String, seed: Long, scale: Float = 0f, zeroPoint: Int = 0) {
        val range = INT_RANGES[dtype]
        if (scale > 0f && range != null) {
            fillQuantized(buffer, dtype, seed, scale, zeroPoint, range)
            return
        }
        val size = DTYPE_SIZES[dtype] ?: throw StageException.protocol("invoke", "unsupported input dtype $dtype")
        require(buffer.capacity() % size == 0) { "buffer of ${buffer.capacity()} bytes is not a whole number of $dtype" }
        val rng = Random(seed)
        val n = buffer.capacity() / size
        val b = buffer.duplicate().order(buffer.order())
        b.clear()
        fun int(lo: Int, hi: Int) = lo + rng.nextInt(hi - lo)
        repeat(n) {
            when (dtype) {
                "float32" -> b.putFloat(rng.nextGaussian().toFloat())
                "float64" -> b.putDouble(rng.nextGaussian())
                "float16" -> b.putShort(toHalf(rng.nextGaussian().toFloat()))
                "int8" -> b.put(int(-128, 127).toByte())
                "uint8" -> b.put(int(0, 127).toByte())
                "int16" -> b.putShort(int(-128, 127).toShort())
                "uint16" -> b.putShort(int(0, 127).toShort())
                "int32" -> b.putInt(int(-128, 127))
                "uint32" -> b.putInt(int(0, 127))
                "int64" -> b.putLong(int(-128, 127).toLong())
                "bool" -> b.put(if (rng.nextBoolean()) 1 else 0)
            }
        }
    }

    private fun fillQuantized(buffer: ByteBuffer, dtype: String, seed: Long, scale: Float, zeroPoint: Int,
                              range: Pair<Long, Long>) {
        val size = DTYPE_SIZES.getValue(dtype)
        require(buffer.capacity() % size == 0) { "buffer of ${buffer.capacity()} bytes is not a whole number of $dtype" }
        val rng = Random(seed)
        val b = buffer.duplicate().order(buffer.order())
        b.clear()
        repeat(buffer.capacity() / size) {
            val q = (Math.rint(rng.nextGaussian() / scale) + zeroPoint).toLong().coerceIn(range.first, range.second)
            when (size) {
                1 -> b.put(q.toByte())
                2 -> b.putShort(q.toShort())
                else -> b.putInt(q.toInt())
            }
        }
    }

    /**
     * What was fed to one input, for the report's `input_fill` (PROTOCOL.md, "Input"): the dtype
     * and the quantization read from the tensor, and the mean and standard deviation of the values
     * in [buffer] (integers as they are, float16 decoded). The host checks a quantized input with it.
     */
    fun record(buffer: ByteBuffer, info: TensorInfo): FillRecord {
        val size = DTYPE_SIZES[info.dtype] ?: return FillRecord(info.dtype, info.scale, info.zeroPoint, 0, 0.0, 0.0)
        val b = buffer.duplicate().order(buffer.order())
        b.clear()
        val n = buffer.capacity() / size
        var sum = 0.0
        var sumSq = 0.0
        repeat(n) {
            val v = when (info.dtype) {
                "float32" -> b.getFloat().toDouble()
                "float64" -> b.getDouble()
                "float16" -> fromHalf(b.getShort())
                "int8" -> b.get().toDouble()
                "uint8", "bool" -> (b.get().toInt() and 0xff).toDouble()
                "int16" -> b.getShort().toDouble()
                "uint16" -> (b.getShort().toInt() and 0xffff).toDouble()
                "int32" -> b.getInt().toDouble()
                "uint32" -> (b.getInt().toLong() and 0xffffffffL).toDouble()
                else -> b.getLong().toDouble()
            }
            sum += v
            sumSq += v * v
        }
        val mean = if (n == 0) 0.0 else sum / n
        val variance = if (n == 0) 0.0 else maxOf(sumSq / n - mean * mean, 0.0)
        return FillRecord(info.dtype, info.scale, info.zeroPoint, n, mean, Math.sqrt(variance))
    }

    /** A float from IEEE 754 binary16 bits. */
    fun fromHalf(bits: Short): Double {
        val h = bits.toInt() and 0xffff
        val sign = if (h and 0x8000 != 0) -1.0 else 1.0
        val exp = (h ushr 10) and 0x1f
        val mant = h and 0x3ff
        return sign * when (exp) {
            0 -> mant / 1024.0 * Math.pow(2.0, -14.0)
            31 -> if (mant == 0) Double.POSITIVE_INFINITY else Double.NaN
            else -> (1 + mant / 1024.0) * Math.pow(2.0, exp - 15.0)
        }
    }

    /** IEEE 754 binary16 from a float (round to nearest even), for float16 inputs. */
    fun toHalf(f: Float): Short {
        val bits = java.lang.Float.floatToIntBits(f)
        val sign = (bits ushr 16) and 0x8000
        val exp = ((bits ushr 23) and 0xff) - 127 + 15
        var mant = bits and 0x7fffff
        return when {
            exp <= 0 -> {
                if (exp < -10) return sign.toShort()
                mant = mant or 0x800000
                val shift = 14 - exp
                val half = mant shr shift
                val rem = mant and ((1 shl shift) - 1)
                val mid = 1 shl (shift - 1)
                val rounded = if (rem > mid || (rem == mid && (half and 1) == 1)) half + 1 else half
                (sign or rounded).toShort()
            }
            exp >= 31 -> (sign or 0x7c00).toShort()
            else -> {
                val half = (exp shl 10) or (mant shr 13)
                val rem = mant and 0x1fff
                val rounded = if (rem > 0x1000 || (rem == 0x1000 && (half and 1) == 1)) half + 1 else half
                (sign or rounded).toShort()
            }
        }
    }
}
