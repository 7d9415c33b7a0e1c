package org.nnlite.bench.core

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

class BenchArgsTest {
    private val base = mapOf(
        "model_path" to "/data/local/tmp/nnlite/m.tflite",
        "report_path" to "/sdcard/Android/data/org.nnlite.bench/files/reports/r.json",
        "run_id" to "r1",
    )

    private fun bad(extras: Map<String, Any?>): ArgsException =
        assertThrows(ArgsException::class.java) { BenchArgs.parse(extras) }

    @Test
    fun `input_ranges gives each input null or its low and high`() {
        val r = BenchArgs.parse(base + ("input_ranges" to "[null, [0, 50]]"))
        assertEquals(listOf(null, InputRange(0, 50)), r.settings.inputRanges)
        assertEquals(emptyList<InputRange?>(), BenchArgs.parse(base).settings.inputRanges)
        for (text in listOf("[[5, 5]]", "[[0]]", "[[0, 1.5]]", "{}", "[0, 50]", "nope")) {
            assertTrue(bad(base + ("input_ranges" to text)).message!!.startsWith(
                "input_ranges must be a JSON array of null or [low, high] integer pairs with low < high"), text)
        }
    }

    @Test
    fun `defaults are the protocol's`() {
        val r = BenchArgs.parse(base)
        assertEquals(BenchSettings(5, 50, 1.0, 10_000, 60.0, 1, Backend.XNNPACK, 0), r.settings)
        assertEquals("r1", r.runId)
    }

    @Test
    fun `typed extras as am start sends them`() {
        val r = BenchArgs.parse(base + mapOf(
            "warmup" to 2, "runs" to 20, "min_seconds" to 0.1f, "max_runs" to 100, "max_seconds" to 5.0f,
            "threads" to 4, "backend" to "gpu", "seed" to 7L,
        ))
        assertEquals(BenchSettings(2, 20, 0.1, 100, 5.0, 4, Backend.GPU, 7), r.settings)
    }

    @Test
    fun `numbers sent as strings are accepted`() {
        val r = BenchArgs.parse(base + mapOf("runs" to "20", "min_seconds" to "0.5", "backend" to "cpu"))
        assertEquals(20, r.settings.runs)
        assertEquals(0.5, r.settings.minSeconds)
        assertEquals(Backend.CPU, r.settings.backend)
    }

    @Test
    fun `missing model_path is an args error that still knows the report path`() {
        val e = bad(base - "model_path")
        assertTrue(e.message!!.contains("missing model_path"), e.message)
        assertEquals(base["report_path"], e.reportPath)
        assertNull(e.values["model_path"])
    }

    @Test
    fun `non-numeric runs is named and left null`() {
        val e = bad(base + ("runs" to "abc"))
        assertTrue(e.message!!.contains("runs must be an integer, got 'abc'"), e.message)
        assertNull(e.values["runs"])
        assertEquals(5L, e.values["warmup"])
    }

    @Test
    fun `unknown backend is refused`() {
        val e = bad(base + ("backend" to "tpu"))
        assertTrue(e.message!!.contains("unknown backend 'tpu'"), e.message)
        assertEquals("tpu", e.values["backend"])
    }

    @Test
    fun `an extra sent as null is an error, not a default`() {
        assertTrue(bad(base + ("backend" to null)).message!!.contains("backend is null"))
        assertTrue(bad(base + ("runs" to null)).message!!.contains("runs must be an integer, got null"))
    }

    @Test
    fun `a typo in an extra name is an error rather than a silent default`() {
        assertTrue(bad(base + ("warmups" to 3)).message!!.contains("unknown extra 'warmups'"))
    }

    @Test
    fun `range checks mirror Python BenchSettings`() {
        assertTrue(bad(base + ("runs" to 0)).message!!.contains("runs must be >= 1"))
        assertTrue(bad(base + ("warmup" to -1)).message!!.contains("warmup must be >= 0"))
        assertTrue(bad(base + ("threads" to 0)).message!!.contains("threads must be in"))
        assertTrue(bad(base + mapOf("runs" to 20, "max_runs" to 10)).message!!.contains("max_runs 10 below runs 20"))
        assertTrue(bad(base + ("min_seconds" to "nan")).message!!.contains("min_seconds must be a finite number"))
        assertTrue(bad(base + ("runs" to 2.5f)).message!!.contains("runs must be an integer"))
    }

    @Test
    fun `a per-op profile request is accepted and checked`() {
        assertNull(BenchArgs.parse(base).profileOps)
        val r = BenchArgs.parse(base + mapOf("profile_ops" to "both", "profile_runs" to 7))
        assertEquals("both", r.profileOps)
        assertEquals(7, r.profileRuns)
        assertEquals(BenchSettings(), r.settings)
        assertTrue(bad(base + ("profile_ops" to "gpu")).message!!.contains("unknown profile_ops 'gpu'"))
        assertTrue(bad(base + ("profile_runs" to 0)).message!!.contains("profile_runs must be >= 1, got 0"))
    }

    @Test
    fun `without report_path the error cannot be reported to a file`() {
        assertNull(bad(base - "report_path").reportPath)
    }
}
