package org.nnlite.bench.core

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import java.io.File

class BenchRunnerTest {
    @TempDir
    lateinit var dir: File

    private val clock = ScriptedClock()
    private val log = RecordingLog()
    private var wall = 1_760_000_000_000L

    private fun runner(engine: Engine = FakeEngine(clock), modelExists: Boolean = true) =
        BenchRunner(engine, { TEST_DEVICE }, log, clock, { wall++ }, { modelExists })

    private fun extras(vararg more: Pair<String, Any?>) = mapOf(
        "model_path" to "/data/local/tmp/nnlite/m.tflite",
        "report_path" to File(dir, "reports/r1.json").path,
        "run_id" to "r1", "runs" to 3, "min_seconds" to 0.0f,
    ) + more

    @Suppress("UNCHECKED_CAST")
    private fun readReport(): Map<String, Any?> = Json.parse(File(dir, "reports/r1.json").readText()) as Map<String, Any?>

    @Test
    fun `a valid run writes the whole report atomically, creating the directory`() {
        val result = runner().execute(extras())
        assertTrue(result.written)
        assertFalse(File(dir, "reports/r1.json.tmp").exists())
        val r = readReport()
        assertEquals(true, r["valid"])
        assertEquals(3L, r["protocol_version"])
        assertEquals("0.3.0", r["app_version"])
        assertEquals(false, r["simulated"])
        assertEquals("r1", r["run_id"])
        assertEquals("xnnpack", r["backend_used"])
        assertEquals(3, (r["samples_ns"] as List<*>).size)
        assertEquals(listOf(listOf(1L, 3L, 8L, 8L)), r["input_shapes"])
        assertEquals(listOf("float32"), r["input_dtypes"])
        assertEquals("Tensor G3", (r["device"] as Map<*, *>)["soc_model"])
        assertTrue((r["finished_at_ms"] as Long) > (r["started_at_ms"] as Long))
        assertTrue(log.lines.last().startsWith("I RESULT run_id=r1 valid=true backend_used=xnnpack report="), log.lines.last())
    }

    @Test
    fun `a per-op profile request is answered without an ops block, and the log says why`() {
        val result = runner().execute(extras("profile_ops" to "xnnpack", "profile_runs" to 5))
        assertTrue(result.written)
        val r = readReport()
        assertEquals(true, r["valid"])
        assertFalse(r.containsKey("ops"))
        assertTrue(log.lines.contains("I NO_OPS_PROFILE profile_ops=xnnpack: $NO_OPS_PROFILE_REASON"), log.lines.toString())
    }

    @Test
    fun `the report carries exactly Python's result keys plus the app's`() {
        runner().execute(extras())
        val python = setOf(
            "valid", "error_stage", "error_type", "error_message", "run_id", "model_path", "backend_requested",
            "backend_used", "threads", "warmup", "runs", "min_seconds", "seed", "init_ns", "first_inference_ns",
            "stats", "samples_ns", "timed_seconds", "input_shapes", "input_dtypes", "input_fill", "output_shapes",
            "warmup_seconds", "require_full_delegation", "timing", "native_stats", "native_samples_ns", "warmup_runs",
            "warmup_mean_ns", "delegation", "memory", "runtime", "runtime_version",
        )
        val app = setOf("protocol_version", "app_version", "simulated", "started_at_ms", "finished_at_ms", "fallback_reason", "device",
            "conditions", "capabilities")
        assertEquals(python + app, readReport().keys)
    }

    @Test
    fun `a bad intent with a report path gives an args report and an error line`() {
        runner().execute(extras("runs" to "abc", "backend" to "tpu"))
        val r = readReport()
        assertEquals(false, r["valid"])
        assertEquals("args", r["error_stage"])
        assertEquals("org.nnlite.bench.core.ArgsException", r["error_type"])
        assertTrue((r["error_message"] as String).contains("unknown backend 'tpu'"))
        assertNull(r["runs"])
        assertEquals("tpu", r["backend_requested"])
        assertFalse(r.containsKey("stats"))
        assertTrue(log.lines.any { it.startsWith("E ERROR stage=args") })
    }

    @Test
    fun `missing model_path is reported, missing report_path only logged`() {
        runner().execute(extras() - "model_path")
        assertEquals("args", readReport()["error_stage"])
        val result = runner().execute(extras() - "report_path")
        assertFalse(result.written)
        assertTrue(log.lines.any { it.contains("report_path missing") })
    }

    @Test
    fun `a load failure is a report with the stage and no measured keys`() {
        runner(modelExists = false).execute(extras())
        val r = readReport()
        assertEquals(false, r["valid"])
        assertEquals("load", r["error_stage"])
        assertEquals("BenchmarkError", r["error_type"])
        assertFalse(r.containsKey("init_ns"))
        assertEquals("xnnpack", r["backend_used"])
    }

    @Test
    fun `the engine is released after a run`() {
        val engine = FakeEngine(clock)
        runner(engine).execute(extras())
        assertEquals("release", engine.calls.last())
        assertNull(engine.loaded)
    }

    @Test
    fun `an unwritable report path is logged, not thrown`() {
        File(dir, "blocker").writeText("a file where a directory should be")
        val result = runner().execute(extras("report_path" to File(dir, "blocker/r.json").path))
        assertFalse(result.written)
        assertTrue(log.lines.last().startsWith("E REPORT_WRITE_FAILED"), log.lines.last())
    }

    @Test
    fun `an unexpected error still ends in a report`() {
        val engine = object : Engine by FakeEngine(clock) {
            override fun outputs(): List<TensorInfo> = throw OutOfMemoryError("simulated")
        }
        runner(engine).execute(extras())
        val r = readReport()
        assertEquals("internal", r["error_stage"])
        assertEquals("java.lang.OutOfMemoryError", r["error_type"])
        assertEquals("r1", r["run_id"])
    }
}
