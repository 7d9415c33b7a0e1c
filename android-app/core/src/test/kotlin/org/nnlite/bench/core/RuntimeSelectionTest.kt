package org.nnlite.bench.core

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import java.io.File

/** The `runtime` extra picks the engine; the report says which runtime ran, its version and what the app has. */
class RuntimeSelectionTest {
    @TempDir
    lateinit var dir: File

    private val clock = ScriptedClock()
    private val log = RecordingLog()
    private val spec = listOf(TensorInfo(listOf(1, 3, 8, 8), "float32", 768), TensorInfo(listOf(1, 4), "int64", 32))

    /** Which engine each request got, and with what input spec. */
    private val made = mutableListOf<String>()
    private var executorchBackends = listOf(ExecuTorchFacts.XNNPACK_BACKEND)

    private fun runtimes(executorch: Boolean = true) = Runtimes(listOfNotNull(
        RuntimeProvider(Runtime.LITERT, "1.4.2") { made += "litert"; FakeEngine(clock) },
        if (!executorch) null else RuntimeProvider(Runtime.EXECUTORCH, "1.5.1") { request ->
            made += "executorch:${request.inputSpec}"
            FakeExecuTorch(FakeEngine(clock, inputs = request.inputSpec!!, nativeFraction = null), request.inputSpec!!, executorchBackends)
        },
    ))

    private val base get() = mapOf(
        "model_path" to "/data/local/tmp/nnlite/m.pte", "report_path" to File(dir, "r.json").path,
        "run_id" to "rt", "runs" to 3, "min_seconds" to 0.0f, "warmup" to 1, "warmup_seconds" to 0.0f,
    )
    private val executorch = mapOf("runtime" to "executorch", "input_shapes" to "[[1,3,8,8],[1,4]]", "input_dtypes" to "[\"float32\",\"int64\"]")

    @Suppress("UNCHECKED_CAST")
    private fun run(extras: Map<String, Any?>, runtimes: Runtimes = runtimes()): Map<String, Any?> {
        BenchRunner(runtimes, { TEST_DEVICE }, log, clock, { 1L }, { true }).execute(base + extras)
        return Json.parse(File(dir, "r.json").readText()) as Map<String, Any?>
    }

    private fun argsError(extras: Map<String, Any?>, available: Set<Runtime> = Runtime.values().toSet()): String =
        assertThrows(ArgsException::class.java) { BenchArgs.parse(base + extras, available) }.message!!

    @Test
    fun `without the extra the runtime is LiteRT, and the report says so with its version`() {
        val r = run(emptyMap())
        assertEquals(listOf("litert"), made)
        assertEquals("litert", r["runtime"])
        assertEquals("1.4.2", r["runtime_version"])
        assertEquals("Interpreter.run", (r["timing"] as Map<*, *>)["wall_clock"])
        assertTrue(log.lines.any { it.startsWith("I START run_id=rt model=/data/local/tmp/nnlite/m.pte runtime=litert backend=xnnpack") },
            log.lines.toString())
    }

    @Test
    fun `runtime executorch gets the ExecuTorch engine with the host's input shapes and dtypes`() {
        val r = run(executorch)
        assertEquals(listOf("executorch:$spec"), made)
        assertEquals(true, r["valid"], r.toString())
        assertEquals("executorch", r["runtime"])
        assertEquals("1.5.1", r["runtime_version"])
        assertEquals(listOf(listOf(1L, 3L, 8L, 8L), listOf(1L, 4L)), r["input_shapes"])
        assertEquals(listOf("float32", "int64"), r["input_dtypes"])
        assertEquals(listOf(listOf(1L, 10L)), r["output_shapes"]) // read once forward had run
        assertEquals(listOf(192L, 4L), (r["input_fill"] as List<*>).map { (it as Map<*, *>)["elements"] })
    }

    @Test
    fun `the ExecuTorch report has no native time, and its delegation is the method's backends`() {
        val r = run(executorch)
        assertEquals(mapOf("stats_of" to "wall", "wall_clock" to "Module.forward", "native_clock" to null), r["timing"])
        assertNull(r["native_stats"])
        assertNull(r["native_samples_ns"])
        assertTrue(r.containsKey("native_stats") && r.containsKey("native_samples_ns"))
        val d = r["delegation"] as Map<*, *>
        assertEquals(mapOf("source" to "method metadata", "delegate" to "XnnpackBackend", "delegated_nodes" to null,
            "total_nodes" to null, "partitions" to null, "full" to null, "applied" to emptyList<Any>(), "error" to null,
            "backends" to listOf("XnnpackBackend")), d)
        assertEquals("xnnpack", r["backend_used"])
        assertNull(r["fallback_reason"])
    }

    @Test
    fun `a program without the XNNPACK delegate is reported as run on the CPU kernels`() {
        executorchBackends = emptyList()
        val r = run(executorch)
        assertEquals(true, r["valid"])
        assertEquals(listOf("xnnpack", "cpu"), listOf(r["backend_requested"], r["backend_used"]))
        assertEquals("xnnpack -> cpu: the program's forward method has no XnnpackBackend delegate (backends: none); " +
            "ExecuTorch ran it on its own CPU kernels", r["fallback_reason"])
    }

    @Test
    fun `require_full_delegation cannot be judged from ExecuTorch's backends and fails at load`() {
        val r = run(executorch + ("require_full_delegation" to true))
        assertEquals(listOf(false, "load"), listOf(r["valid"], r["error_stage"]))
        assertEquals("require_full_delegation: the runtime names the program's delegates (XnnpackBackend) but not how many " +
            "nodes they took", r["error_message"])
    }

    @Test
    fun `an unknown runtime is a clear args error, echoed in the report`() {
        assertEquals("unknown runtime 'tflite' (one of litert, executorch)", argsError(mapOf("runtime" to "tflite")))
        val r = run(mapOf("runtime" to "tflite"))
        assertEquals(listOf(false, "args"), listOf(r["valid"], r["error_stage"]))
        assertEquals("tflite", r["runtime"])
        assertNull(r["runtime_version"])
        assertTrue(made.isEmpty())
    }

    @Test
    fun `a runtime the build lacks is refused by name, and the report shows what the build has`() {
        assertEquals("runtime 'executorch' is not in this app build (it has litert)",
            argsError(executorch, setOf(Runtime.LITERT)))
        val r = run(executorch, runtimes(executorch = false))
        assertEquals("args", r["error_stage"])
        assertEquals(mapOf("litert" to "1.4.2"), (r["capabilities"] as Map<*, *>)["runtimes"])
        assertNull(r["runtime_version"])
    }

    @Test
    fun `the ExecuTorch extras are checked against the runtime`() {
        assertTrue(argsError(mapOf("runtime" to "executorch")).startsWith("missing input_shapes (runtime executorch needs them"))
        assertEquals("input_shapes is for runtime executorch only (LiteRT reads the inputs from the model)",
            argsError(mapOf("input_shapes" to "[[1,3]]")))
        assertEquals("backend 'gpu' is not available with runtime executorch (its program's delegates are fixed at export; " +
            "it takes xnnpack)", argsError(executorch + ("backend" to "gpu")))
        assertEquals("input_shapes must be a JSON array of arrays of integers >= 0, got '1x3x8x8'",
            argsError(executorch + ("input_shapes" to "1x3x8x8")))
        assertEquals("input_shapes must be a JSON array of arrays of integers >= 0, got '[[1,-3]]'",
            argsError(executorch + ("input_shapes" to "[[1,-3]]")))
        assertEquals("input_dtypes has 1 entries for 2 input_shapes", argsError(executorch + ("input_dtypes" to "[\"float32\"]")))
        assertEquals("unknown input dtype 'float8' (one of ${InputFill.DTYPE_SIZES.keys.joinToString()})",
            argsError(executorch + ("input_dtypes" to "[\"float32\",\"float8\"]")))
        assertEquals("input 0 of shape [65536, 65536] needs more than 2 GiB",
            argsError(executorch + mapOf("input_shapes" to "[[65536,65536]]", "input_dtypes" to "[\"uint8\"]")))
    }

    @Test
    fun `input dtypes default to float32 and a scalar input has one element`() {
        val r = BenchArgs.parse(base + mapOf("runtime" to "executorch", "input_shapes" to "[[2,3],[]]"))
        assertEquals(listOf(TensorInfo(listOf(2, 3), "float32", 24), TensorInfo(emptyList(), "float32", 4)), r.inputSpec)
        assertEquals(Runtime.EXECUTORCH, r.runtime)
        assertNull(BenchArgs.parse(base).inputSpec)
    }

    @Test
    fun `every report announces the build's runtimes and the extras it accepts`() {
        for (extras in listOf(emptyMap(), executorch, mapOf("runs" to "abc"))) {
            val caps = run(extras)["capabilities"] as Map<*, *>
            assertEquals(mapOf("litert" to "1.4.2", "executorch" to "1.5.1"), caps["runtimes"])
            assertEquals(BenchArgs.KNOWN_KEYS.sorted(), caps["extras"])
        }
        assertTrue(listOf("runtime", "input_shapes", "input_dtypes", "energy", "energy_seconds").all { it in BenchArgs.KNOWN_KEYS })
    }

    @Test
    fun `a per-op profile request on ExecuTorch is answered with ExecuTorch's reason`() {
        val r = run(executorch + ("profile_ops" to "xnnpack"))
        assertFalse(r.containsKey("ops"))
        assertTrue(log.lines.contains("I NO_OPS_PROFILE profile_ops=xnnpack: $NO_OPS_PROFILE_REASON_EXECUTORCH"), log.lines.toString())
    }

    @Test
    fun `ExecuTorch dtypes read as numpy names`() {
        assertEquals(listOf("float32", "float16", "int64", "uint8", "bool", "bfloat16", "qint8"),
            listOf("FLOAT", "HALF", "INT64", "UINT8", "BOOL", "BFLOAT16", "QINT8").map { ExecuTorchFacts.numpyDtype(it) })
    }
}
