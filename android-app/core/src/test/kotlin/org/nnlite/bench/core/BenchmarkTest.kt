package org.nnlite.bench.core

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

class BenchmarkTest {
    private val clock = ScriptedClock()

    private fun run(engine: FakeEngine, settings: BenchSettings, outcome: BackendOutcome = BackendOutcome(settings.backend, null)) =
        Benchmark.run("/m.tflite", settings, engine, clock, outcome) { true }

    @Test
    fun `runs is enough once min_seconds of timed work is reached`() {
        val engine = FakeEngine(clock, invokeNs = 2_000_000)
        val m = run(engine, BenchSettings(warmup = 3, runs = 10, minSeconds = 0.0, warmupSeconds = 0.0))
        assertEquals(10, m.samplesNs.size)
        assertEquals(1 + 3 + 10, engine.invokes) // first + warm-up + timed
        assertTrue(m.samplesNs.all { it == 2_000_000L }, "untimed work leaked into a sample")
        assertEquals(2_000_000L, m.firstInferenceNs)
        assertEquals(35_000_000L, m.initNs) // load + allocate, nothing else
        assertEquals(0.02, m.timedSeconds, 1e-15)
    }

    @Test
    fun `min_seconds extends the run past runs`() {
        val m = run(FakeEngine(clock, invokeNs = 10_000_000), BenchSettings(runs = 5, minSeconds = 0.2))
        assertEquals(20, m.samplesNs.size) // 20 x 10 ms = 0.2 s
    }

    @Test
    fun `max_runs caps the loop`() {
        val m = run(FakeEngine(clock, invokeNs = 1_000), BenchSettings(runs = 5, minSeconds = 10.0, maxRuns = 7, warmupSeconds = 0.0))
        assertEquals(7, m.samplesNs.size)
    }

    @Test
    fun `max_seconds caps the loop even below runs`() {
        val m = run(FakeEngine(clock, invokeNs = 400_000_000), BenchSettings(runs = 50, maxSeconds = 1.0))
        assertEquals(3, m.samplesNs.size) // 0.4, 0.8, 1.2 s: stops once the cap is passed
    }

    @Test
    fun `the loop grows past its initial buffer`() {
        val m = run(FakeEngine(clock, invokeNs = 1), BenchSettings(runs = 3000, minSeconds = 0.0, maxRuns = 5000, warmupSeconds = 0.0))
        assertEquals(3000, m.samplesNs.size)
    }

    @Test
    fun `samples are recorded in order and summarised`() {
        val engine = FakeEngine(clock, invokeScript = ArrayDeque(listOf(9L, 1L, 2L, 3L, 4L)))
        val m = run(engine, BenchSettings(warmup = 0, runs = 4, minSeconds = 0.0, warmupSeconds = 0.0))
        assertEquals(9L, m.firstInferenceNs)
        assertEquals(listOf(1L, 2L, 3L, 4L), m.samplesNs.asList())
        assertEquals(2.5, m.summary.medianNs)
    }

    @Test
    fun `gpu that fails to load falls back to xnnpack and says so`() {
        val engine = FakeEngine(clock, failLoad = mapOf(Backend.GPU to IllegalArgumentException("Internal error: Failed to apply delegate: GpuDelegate Prepare: ...\nmore")))
        val outcome = BackendOutcome(Backend.GPU, null)
        val m = run(engine, BenchSettings(backend = Backend.GPU, runs = 2, minSeconds = 0.0), outcome)
        assertEquals(Backend.XNNPACK, outcome.used)
        assertEquals("gpu -> xnnpack: load failed: java.lang.IllegalArgumentException: Internal error: Failed to apply delegate: GpuDelegate Prepare: ...", outcome.fallbackReason)
        assertEquals(listOf("load:gpu:1", "release", "load:xnnpack:1", "allocate"), engine.calls.take(4))
        assertEquals(35_000_000L, m.initNs) // the attempt that produced the interpreter
    }

    @Test
    fun `a requested backend that works reports no fallback`() {
        val outcome = BackendOutcome(Backend.NNAPI, null)
        run(FakeEngine(clock), BenchSettings(backend = Backend.NNAPI, runs = 1, minSeconds = 0.0), outcome)
        assertEquals(Backend.NNAPI, outcome.used)
        assertNull(outcome.fallbackReason)
    }

    @Test
    fun `a runtime that reports the delegate did not run is truthfully recorded`() {
        val engine = FakeEngine(clock, runtimeFallback = Backend.CPU to "NNAPI errno 4")
        val outcome = BackendOutcome(Backend.NNAPI, null)
        run(engine, BenchSettings(backend = Backend.NNAPI, runs = 1, minSeconds = 0.0), outcome)
        assertEquals(Backend.CPU, outcome.used)
        assertEquals("nnapi -> cpu: NNAPI errno 4", outcome.fallbackReason)
    }

    @Test
    fun `load failure on the last backend is a load error`() {
        val engine = FakeEngine(clock, failLoad = mapOf(Backend.XNNPACK to IllegalArgumentException("Didn't find op for builtin opcode 'STABLEHLO_SORT'")))
        val outcome = BackendOutcome(Backend.XNNPACK, null)
        val e = assertThrows(StageException::class.java) { run(engine, BenchSettings(), outcome) }
        assertEquals("load", e.stage)
        assertEquals("java.lang.IllegalArgumentException", e.errorType)
        assertNull(outcome.fallbackReason)
    }

    @Test
    fun `gpu then xnnpack both failing keeps the fallback story`() {
        val boom = IllegalStateException("bad model")
        val engine = FakeEngine(clock, failLoad = mapOf(Backend.GPU to boom), failAllocate = mapOf(Backend.XNNPACK to boom))
        val outcome = BackendOutcome(Backend.GPU, null)
        val e = assertThrows(StageException::class.java) { run(engine, BenchSettings(backend = Backend.GPU), outcome) }
        assertEquals("allocate", e.stage)
        assertEquals(Backend.XNNPACK, outcome.used)
        assertTrue(outcome.fallbackReason!!.startsWith("gpu -> xnnpack: load failed"))
    }

    @Test
    fun `invoke failure is an invoke error`() {
        val e = assertThrows(StageException::class.java) { run(FakeEngine(clock, failInvokeAt = 3), BenchSettings()) }
        assertEquals("invoke", e.stage)
        assertEquals("Internal error: Failed to run on the given Interpreter", e.message)
    }

    @Test
    fun `missing model file is a load error from the protocol itself`() {
        val e = assertThrows(StageException::class.java) {
            Benchmark.run("/nope.tflite", BenchSettings(), FakeEngine(clock), clock, BackendOutcome(Backend.XNNPACK, null)) { false }
        }
        assertEquals("load", e.stage)
        assertEquals("BenchmarkError", e.errorType)
        assertEquals("model file not found: /nope.tflite", e.message)
    }

    @Test
    fun `the seed reaches the input`() {
        val engine = FakeEngine(clock)
        run(engine, BenchSettings(seed = 42, runs = 1, minSeconds = 0.0))
        assertEquals(42L, engine.preparedSeed)
    }
}
