package org.nnlite.bench.core

import java.nio.ByteBuffer
import java.nio.ByteOrder
import java.util.Random

/**
 * The fixed seeded input (PROTOCOL.md, "Input"): every input tensor is filled from a fresh
 * java.util.Random(seed) — standard normal floats, integers uniform in
 * [max(type min, 0), min(type max, 127)) (non-negative: token ids index embeddings, and ExecuTorch's
 * embedding kernel fails on a negative one), booleans uniform — the same ranges as Python's
 * bench.make_input, though not the same values (numpy's generator differs). A quantized integer
 * tensor (scale > 0, e.g. a full-int8 model's input) gets the standard normal sample quantized
 * with its scale and zero point, q = clamp(round(x / scale) + zeroPoint), as make_input does.
 * An integer input with an [InputRange] (token ids, told by the host in `input_ranges`) gets integers
 * uniform in [low, high) instead, clamped to its type, as make_input's `value_range`.
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

    /** Each input's buffer filled for [seed] (its range, if any, from [ranges]), and what it was fed. */
    fun fillAll(buffers: List<ByteBuffer>, infos: List<TensorInfo>, seed: Long, ranges: List<InputRange?>): List<FillRecord> =
        buffers.mapIndexed { i, buffer ->
            val range = ranges.getOrNull(i)
            fill(buffer, infos[i].dtype, seed, infos[i].scale, infos[i].zeroPoint, range)
            // the record names a range only where the fill used it (an integer input, not quantized)
            record(buffer, infos[i], range?.takeIf { infos[i].dtype in INT_FILLS && infos[i].scale <= 0f })
        }

    fun fill(buffer: ByteBuffer, dtype: String, seed: Long, scale: Float = 0f, zeroPoint: Int = 0,
             valueRange: InputRange? = null) {
        val range = INT_RANGES[dtype]
        if (scale > 0f && range != null) {
            fillQuantized(buffer, dtype, seed, scale, zeroPoint, range)
            return
        }
        if (valueRange != null && dtype in INT_FILLS) {
            fillRanged(buffer, dtype, seed, valueRange)
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
                "int8" -> b.put(int(0, 127).toByte())
                "uint8" -> b.put(int(0, 127).toByte())
                "int16" -> b.putShort(int(0, 127).toShort())
                "uint16" -> b.putShort(int(0, 127).toShort())
                "int32" -> b.putInt(int(0, 127))
                "uint32" -> b.putInt(int(0, 127))
                "int64" -> b.putLong(int(0, 127).toLong())
                "bool" -> b.put(if (rng.nextBoolean()) 1 else 0)
            }
        }
    }

    /** The integer types a range applies to, with the values each can hold (int64 and uint32 too). */
    private val INT_FILLS = INT_RANGES + mapOf("int64" to (Long.MIN_VALUE to Long.MAX_VALUE), "uint32" to (0L to 4294967295L))

    private fun fillRanged(buffer: ByteBuffer, dtype: String, seed: Long, valueRange: InputRange) {
        val size = DTYPE_SIZES.getValue(dtype)
        require(buffer.capacity() % size == 0) { "buffer of ${buffer.capacity()} bytes is not a whole number of $dtype" }
        val (typeLow, typeHigh) = INT_FILLS.getValue(dtype)
        val low = maxOf(valueRange.low, typeLow)
        val span = minOf(valueRange.high - 1, typeHigh) - low + 1 // values low..high-1 that the type holds
        require(span > 0) { "range [${valueRange.low}, ${valueRange.high}) holds no $dtype value" }
        val rng = Random(seed)
        val b = buffer.duplicate().order(buffer.order())
        b.clear()
        repeat(buffer.capacity() / size) {
            // nextInt(bound) where the span fits an int (any vocabulary); Random.nextLong(bound) is API 34+
            val v = low + if (span <= Int.MAX_VALUE) rng.nextInt(span.toInt()).toLong() else Math.floorMod(rng.nextLong(), span)
            when (size) {
                1 -> b.put(v.toByte())
                2 -> b.putShort(v.toShort())
                4 -> b.putInt(v.toInt())
                else -> b.putLong(v)
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
    fun record(buffer: ByteBuffer, info: TensorInfo, range: InputRange? = null): FillRecord {
        val size = DTYPE_SIZES[info.dtype] ?: return FillRecord(info.dtype, info.scale, info.zeroPoint, 0, 0.0, 0.0,
            range = range)
        val b = buffer.duplicate().order(buffer.order())
        b.clear()
        val n = buffer.capacity() / size
        var sum = 0.0
        var sumSq = 0.0
        var min = Double.POSITIVE_INFINITY
        var max = Double.NEGATIVE_INFINITY
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
            min = minOf(min, v)
            max = maxOf(max, v)
        }
        val mean = if (n == 0) 0.0 else sum / n
        val variance = if (n == 0) 0.0 else maxOf(sumSq / n - mean * mean, 0.0)
        return FillRecord(info.dtype, info.scale, info.zeroPoint, n, mean, Math.sqrt(variance),
            if (n == 0) null else min, if (n == 0) null else max, range)
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
