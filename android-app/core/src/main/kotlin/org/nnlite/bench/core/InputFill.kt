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
