package org.nnlite.bench.core

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotEquals
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.nio.ByteBuffer

class InputFillTest {
    private fun filled(dtype: String, bytes: Int, seed: Long): ByteBuffer =
        InputFill.allocate(bytes).also { InputFill.fill(it, dtype, seed) }

    @Test
    fun `same seed same bytes, other seed other bytes`() {
        assertEquals(filled("float32", 4096, 0), filled("float32", 4096, 0))
        assertNotEquals(filled("float32", 4096, 0), filled("float32", 4096, 1))
    }

    @Test
    fun `a quantized int8 input is the float sample quantized with its scale and zero point`() {
        val scale = 0.05f
        val zeroPoint = 3
        val f = filled("float32", 4 * 2000, 7).asFloatBuffer()
        val q = InputFill.allocate(2000).also { InputFill.fill(it, "int8", 7, scale, zeroPoint) }
        for (i in 0 until 2000) {
            val x = f.get(i).toDouble()
            if (Math.abs(x) < 120 * scale) { // away from saturation
                assertEquals(x, (q.get(i) - zeroPoint) * scale.toDouble(), scale / 2.0 + 1e-6)
            }
        }
        // Unquantized (scale 0) it keeps the plain integer fill.
        assertEquals(filled("int8", 2000, 7), InputFill.allocate(2000).also { InputFill.fill(it, "int8", 7, 0f, 0) })
    }

    @Test
    fun `the fill record gives the moments of the values fed, with the tensor's parameters`() {
        val info = TensorInfo(listOf(1, 4000), "int8", 4000, 0.05f, 3)
        val q = InputFill.allocate(4000).also { InputFill.fill(it, "int8", 7, info.scale, info.zeroPoint) }
        val r = InputFill.record(q, info)
        assertEquals(Triple("int8", 0.05f, 3), Triple(r.dtype, r.scale, r.zeroPoint))
        assertEquals(4000, r.elements)
        val values = (0 until 4000).map { q.get(it).toDouble() }
        val mean = values.average()
        assertEquals(mean, r.mean, 1e-9)
        assertEquals(Math.sqrt(values.sumOf { (it - mean) * (it - mean) } / 4000), r.std, 1e-6)
        // A standard normal at scale 0.05: about 20 integer steps per unit, centred on the zero point.
        assertEquals(3.0, r.mean, 1.5)
        assertEquals(20.0, r.std, 1.5)
        assertEquals(0, q.position())
        val half = InputFill.allocate(4).also { it.putShort(InputFill.toHalf(1.5f)).putShort(InputFill.toHalf(-0.5f)) }
        assertEquals(0.5, InputFill.record(half, TensorInfo(listOf(2), "float16", 4)).mean, 1e-9)
    }

    @Test
    fun `fill leaves the buffer position alone`() {
        val b = filled("float32", 64, 3)
        assertEquals(0, b.position())
        assertEquals(64, b.limit())
    }

    @Test
    fun `floats look standard normal and integers stay in Python's ranges`() {
        val f = filled("float32", 4 * 20000, 0).asFloatBuffer()
        val xs = DoubleArray(20000) { f.get(it).toDouble() }
        val mean = xs.average()
        val std = Math.sqrt(xs.map { (it - mean) * (it - mean) }.average())
        assertEquals(0.0, mean, 0.03)
        assertEquals(1.0, std, 0.03)
        val u8 = filled("uint8", 5000, 0)
        assertTrue((0 until 5000).all { (u8.get(it).toInt() and 0xff) in 0..126 })
        val i8 = filled("int8", 5000, 0)
        assertTrue((0 until 5000).all { i8.get(it) in 0..126 })
        val i64 = filled("int64", 8 * 100, 0).asLongBuffer()
        assertTrue((0 until 100).all { i64.get(it) in 0L..126L })
    }

    @Test
    fun `a ranged integer input stays in low until high, covers it, and the record says so`() {
        // token ids of a 50-word vocabulary: the plain fill's [0, 127) would index past the table
        val info = TensorInfo(listOf(1, 6000), "int32", 4 * 6000)
        val range = InputRange(0, 50)
        val buffer = InputFill.allocate(info.numBytes)
        val record = InputFill.fillAll(listOf(buffer), listOf(info), 3, listOf(range)).single()
        val ids = (0 until 6000).map { buffer.asIntBuffer().get(it) }
        assertEquals((0..49).toSet(), ids.toSet())
        assertEquals(Triple(0.0, 49.0, range), Triple(record.min, record.max, record.range))
        // a discrete uniform on 0..49: mean 24.5, standard deviation sqrt((50^2 - 1) / 12) = 14.43
        assertEquals(24.5, record.mean, 6 * 14.43 / Math.sqrt(6000.0))
        assertEquals(Math.sqrt((50.0 * 50 - 1) / 12), record.std, 0.5)
        assertEquals(listOf(0L, 50L), record.toMap()["range"])
        // int64 and a range that starts above zero; a float input ignores a range
        val longs = InputFill.allocate(8 * 500).also { InputFill.fill(it, "int64", 1, valueRange = InputRange(4, 7)) }
        assertEquals(setOf(4L, 5L, 6L), (0 until 500).map { longs.asLongBuffer().get(it) }.toSet())
        assertEquals(filled("float32", 64, 2), InputFill.allocate(64).also { InputFill.fill(it, "float32", 2, valueRange = range) })
        // without a range: the plain fill, and no range in the record
        val plain = InputFill.fillAll(listOf(InputFill.allocate(info.numBytes)), listOf(info), 3, emptyList()).single()
        assertEquals(null, plain.range)
        assertTrue(plain.max!! > 49.0)
    }

    @Test
    fun `half precision conversion`() {
        assertEquals(0x3c00.toShort(), InputFill.toHalf(1.0f))
        assertEquals(0xc000.toShort(), InputFill.toHalf(-2.0f))
        assertEquals(0x0000.toShort(), InputFill.toHalf(0.0f))
        assertEquals(0x7c00.toShort(), InputFill.toHalf(1e6f))
        assertEquals(0x3555.toShort(), InputFill.toHalf(1f / 3))
    }

    @Test
    fun `unsupported dtypes fail at the invoke stage`() {
        val e = assertThrows(StageException::class.java) { filled("string", 8, 0) }
        assertEquals("invoke", e.stage)
    }
}
