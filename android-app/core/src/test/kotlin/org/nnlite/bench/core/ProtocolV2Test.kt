package org.nnlite.bench.core

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import java.io.File

/** Protocol version 2: native timing, warm-up by time, conditions, memory, delegation, LinkageError fallback. */
class ProtocolV2Test {
    @TempDir
    lateinit var dir: File

    private val clock = ScriptedClock()

    private fun run(engine: FakeEngine, settings: BenchSettings, probe: DeviceProbe? = null, outcome: BackendOutcome = BackendOutcome(settings.backend, null)) =
        Benchmark.run("/m.tflite", settings, engine, clock, outcome, probe) { true }

    @Test
    fun `each timed run records the native time beside the wall time`() {
        val engine = FakeEngine(clock, invokeScript = ArrayDeque(listOf(9L, 1000L, 2000L, 3000L)), nativeFraction = 0.5)
        val m = run(engine, BenchSettings(warmup = 0, warmupSeconds = 0.0, runs = 3, minSeconds = 0.0))
        assertEquals(listOf(1000L, 2000L, 3000L), m.samplesNs.asList())
        assertEquals(listOf(500L, 1000L, 1500L), m.nativeSamplesNs!!.asList())
        assertEquals(1000.0, m.nativeSummary!!.medianNs)
        assertEquals(2000.0, m.summary.medianNs) // stats stay the wall time's
    }

    @Test
    fun `a runtime without native timing gives no native samples, not zeros`() {
        val m = run(FakeEngine(clock, nativeFraction = null), BenchSettings(warmup = 0, warmupSeconds = 0.0, runs = 3, minSeconds = 0.0))
        assertNull(m.nativeSamplesNs)
        assertNull(m.nativeSummary)
    }

    @Test
    fun `warm-up runs until both the count and the time are reached, and its mean is kept`() {
        val engine = FakeEngine(clock, invokeNs = 100_000_000) // 0.1 s per invoke
        val m = run(engine, BenchSettings(warmup = 2, warmupSeconds = 0.5, runs = 1, minSeconds = 0.0))
        assertEquals(5, m.warmupRuns) // 2 runs would be 0.2 s: time decides
        assertEquals(100_000_000.0, m.warmupMeanNs)
        assertEquals(1 + 5 + 1, engine.invokes)
        val byCount = run(FakeEngine(clock, invokeNs = 400_000_000), BenchSettings(warmup = 3, warmupSeconds = 0.5, runs = 1, minSeconds = 0.0))
        assertEquals(3, byCount.warmupRuns) // 2 runs reach 0.8 s, the count decides
    }

    @Test
    fun `warm-up time is capped by max_seconds`() {
        val m = run(FakeEngine(clock, invokeNs = 1_000_000_000), BenchSettings(warmup = 0, warmupSeconds = 1e6, runs = 1, minSeconds = 0.0, maxSeconds = 3.0))
        assertEquals(3, m.warmupRuns)
    }

    @Test
    fun `no warm-up at all has no mean`() {
        val m = run(FakeEngine(clock), BenchSettings(warmup = 0, warmupSeconds = 0.0, runs = 1, minSeconds = 0.0))
        assertEquals(0, m.warmupRuns)
        assertNull(m.warmupMeanNs)
    }

    @Test
    fun `conditions and memory are read before and after, never inside the timed region`() {
        val probe = FakeProbe()
        val engine = FakeEngine(clock, invokeNs = 2_000_000)
        val m = run(engine, BenchSettings(warmup = 0, warmupSeconds = 0.0, runs = 3, minSeconds = 0.0), probe)
        assertEquals(listOf("sustained", "conditions", "memory", "memory", "conditions", "memory"), probe.calls)
        assertTrue(m.samplesNs.all { it == 2_000_000L })
        val mem = m.memory!!
        assertEquals(60_000L, (mem["before_load"] as Map<*, *>)["vm_rss_kb"])
        assertEquals(70_005L, (mem["after_load"] as Map<*, *>)["vm_hwm_kb"])
        assertEquals(80_000L, (mem["after_runs"] as Map<*, *>)["vm_rss_kb"])
        assertEquals(8_192L, (mem["after_runs"] as Map<*, *>)["native_heap_size_kb"])
        val c = m.conditions!!
        assertEquals(false, c["throttled"])
        assertEquals(mapOf("supported" to true, "enabled" to true), c["sustained_performance"])
        assertEquals("none", (c["before"] as Map<*, *>)["thermal_status_name"])
    }

    @Test
    fun `a device that starts throttling during the runs is flagged`() {
        val probe = FakeProbe(statuses = ArrayDeque(listOf(0, 2)))
        val c = run(FakeEngine(clock), BenchSettings(warmup = 0, warmupSeconds = 0.0, runs = 1, minSeconds = 0.0), probe).conditions!!
        assertEquals(true, c["throttled"])
        assertEquals("moderate", (c["after"] as Map<*, *>)["thermal_status_name"])
    }

    @Test
    fun `throttling is judged by status, else headroom, else unknown`() {
        fun snap(status: Int?, headroom: Double?) = ConditionsSnapshot(0, status, headroom, null, null, null, null)
        assertEquals(false, Conditions.throttled(listOf(snap(0, 0.3), snap(0, 0.6))))
        assertEquals(true, Conditions.throttled(listOf(snap(0, 0.3), snap(1, 0.6))))
        assertEquals(true, Conditions.throttled(listOf(snap(null, 0.3), snap(null, 1.05))))
        assertEquals(false, Conditions.throttled(listOf(snap(null, 0.3), snap(null, Double.NaN))))
        assertNull(Conditions.throttled(listOf(snap(null, null), snap(null, Double.NaN))))
    }

    @Test
    fun `proc status lines are read in kB and a missing line is null`() {
        val m = MemorySnapshot.fromProcStatus("Name:\tx\nVmPeak:\t 9 kB\nVmHWM:\t  1234 kB\nVmRSS:\t   999 kB\n", null, null)
        assertEquals(999L, m.vmRssKb)
        assertEquals(1234L, m.vmHwmKb)
        assertNull(MemorySnapshot.fromProcStatus("Name:\tx\n", null, null).vmRssKb)
        assertNull(MemorySnapshot.fromProcStatus(null, null, null).vmHwmKb)
    }

    @Test
    fun `LiteRT's replacing line gives delegated nodes, total and partitions`() {
        val d = Delegation.parse(listOf(
            "Created TensorFlow Lite delegate for GPU.",
            "Replacing 12 out of 15 node(s) with delegate (TfLiteGpuDelegateV2) node, yielding 2 partitions for the whole graph.",
            "Replacing 3 out of 5 node(s) with delegate (TfLiteXNNPackDelegate) node, yielding 2 partitions for the whole graph.",
        ))
        val map = d.toMap()
        assertEquals("TfLiteGpuDelegateV2", map["delegate"])
        assertEquals(listOf(12, 15, 2), listOf(map["delegated_nodes"], map["total_nodes"], map["partitions"]))
        assertEquals(false, map["full"])
        assertEquals(2, (map["applied"] as List<*>).size)
        val old = Delegation.parse(listOf("Replacing 7 node(s) with delegate (TfLiteNnapiDelegate) node, yielding 1 partitions."))
        assertEquals(listOf(7, null, 1, null), listOf(old.toMap()["delegated_nodes"], old.toMap()["total_nodes"], old.toMap()["partitions"], old.full))
        val none = Delegation.parse(emptyList()).toMap()
        assertEquals(listOf(0, 0, false), listOf(none["delegated_nodes"], none["partitions"], none["full"]))
        val unread = Delegation.unreadable("logcat", "logcat: permission denied").toMap()
        assertEquals(listOf(null, null, null), listOf(unread["delegated_nodes"], unread["partitions"], unread["full"]))
    }

    @Test
    fun `only this attempt's tflite lines are read from logcat`() {
        val logcat = """
            --------- beginning of main
              1760000000.100  4321  4340 I tflite  : Replacing 3 out of 9 node(s) with delegate (TfLiteGpuDelegateV2) node, yielding 2 partitions for the whole graph.
              1760000000.900  4321  4340 I NNLiteBench: START run_id=x
              1760000001.250  4321  4340 I tflite  : Created TensorFlow Lite XNNPACK delegate for CPU.
              1760000001.251  4321  4340 I tflite  : Replacing 9 out of 9 node(s) with delegate (TfLiteXNNPackDelegate) node, yielding 1 partitions for the whole graph.
        """.trimIndent()
        val lines = Delegation.messagesSince(logcat, 1_760_000_001_000L)
        assertEquals(listOf("Created TensorFlow Lite XNNPACK delegate for CPU.",
            "Replacing 9 out of 9 node(s) with delegate (TfLiteXNNPackDelegate) node, yielding 1 partitions for the whole graph."), lines)
        assertEquals(true, Delegation.parse(lines).full)
        assertEquals(3, Delegation.messagesSince(logcat, 0).size) // the START line has another tag
    }

    @Test
    fun `require_full_delegation fails a partly delegated graph at load, without falling back`() {
        val engine = FakeEngine(clock, delegateLog = mapOf(Backend.GPU to listOf(
            "Replacing 12 out of 15 node(s) with delegate (TfLiteGpuDelegateV2) node, yielding 2 partitions for the whole graph.")))
        val e = assertThrows(StageException::class.java) {
            run(engine, BenchSettings(backend = Backend.GPU, requireFullDelegation = true))
        }
        assertEquals("load", e.stage)
        assertEquals("BenchmarkError", e.errorType)
        assertEquals("require_full_delegation: TfLiteGpuDelegateV2 took 12 of 15 nodes (2 partitions)", e.message)
        assertEquals(0, engine.invokes)
        assertFalse(engine.calls.contains("load:xnnpack:1"))
    }

    @Test
    fun `require_full_delegation passes a wholly delegated graph`() {
        val m = run(FakeEngine(clock), BenchSettings(warmup = 0, warmupSeconds = 0.0, runs = 1, minSeconds = 0.0, requireFullDelegation = true))
        assertEquals(true, m.delegation!!.full)
    }

    @Test
    fun `a missing native library (LinkageError) falls back to xnnpack with the reason`() {
        val engine = FakeEngine(clock, failLoad = mapOf(
            Backend.GPU to UnsatisfiedLinkError("dlopen failed: library \"libtensorflowlite_gpu_jni.so\" not found"),
            Backend.NNAPI to NoClassDefFoundError("org/tensorflow/lite/nnapi/NnApiDelegate"),
        ))
        for (backend in listOf(Backend.GPU, Backend.NNAPI)) {
            val outcome = BackendOutcome(backend, null)
            run(engine, BenchSettings(backend = backend, warmup = 0, warmupSeconds = 0.0, runs = 1, minSeconds = 0.0), outcome = outcome)
            assertEquals(Backend.XNNPACK, outcome.used)
            val type = if (backend == Backend.GPU) "java.lang.UnsatisfiedLinkError" else "java.lang.NoClassDefFoundError"
            assertTrue(outcome.fallbackReason!!.startsWith("${backend.wire} -> xnnpack: load failed: $type: "), outcome.fallbackReason)
        }
    }

    @Test
    fun `an OutOfMemoryError while loading is not mistaken for a missing delegate`() {
        val engine = FakeEngine(clock, failLoad = mapOf(Backend.GPU to OutOfMemoryError("heap")))
        assertThrows(OutOfMemoryError::class.java) { run(engine, BenchSettings(backend = Backend.GPU)) }
    }

    @Test
    fun `the v2 report carries timing, warm-up, delegation, memory and conditions`() {
        val log = RecordingLog()
        val report = File(dir, "r.json")
        val probe = FakeProbe(statuses = ArrayDeque(listOf(0, 3)))
        BenchRunner(FakeEngine(clock), { TEST_DEVICE }, log, clock, { 1L }, { true }, probe).execute(mapOf(
            "model_path" to "/m.tflite", "report_path" to report.path, "run_id" to "v2",
            "runs" to 3, "min_seconds" to 0.0f, "warmup_seconds" to "0.01", "require_full_delegation" to true,
        ))
        @Suppress("UNCHECKED_CAST")
        val r = Json.parse(report.readText()) as Map<String, Any?>
        assertEquals(3L, r["protocol_version"])
        assertEquals(true, r["valid"], r.toString())
        assertEquals(0.01, r["warmup_seconds"])
        assertEquals(true, r["require_full_delegation"])
        assertEquals(mapOf("stats_of" to "wall", "wall_clock" to "Interpreter.run",
            "native_clock" to "Interpreter.getLastNativeInferenceDurationNanoseconds"), r["timing"])
        assertEquals(3L, (r["native_stats"] as Map<*, *>)["count"])
        assertEquals(5L, r["warmup_runs"]) // 5 x 2 ms reach 0.01 s
        assertEquals(2_000_000.0, r["warmup_mean_ns"])
        assertEquals(true, (r["delegation"] as Map<*, *>)["full"])
        assertEquals("device", (r["memory"] as Map<*, *>)["source"])
        assertEquals(true, (r["conditions"] as Map<*, *>)["throttled"])
    }

    @Test
    fun `bad v2 extras are args errors`() {
        val e = assertThrows(ArgsException::class.java) {
            BenchArgs.parse(mapOf("model_path" to "/m", "report_path" to "/r", "run_id" to "x",
                "warmup_seconds" to -1.0, "require_full_delegation" to "yes"))
        }
        assertEquals("require_full_delegation must be true or false, got 'yes'; warmup_seconds must be >= 0, got -1.0", e.message)
        val ok = BenchArgs.parse(mapOf("model_path" to "/m", "report_path" to "/r", "run_id" to "x", "require_full_delegation" to "true"))
        assertTrue(ok.settings.requireFullDelegation)
        assertEquals(0.5, ok.settings.warmupSeconds)
    }
}
