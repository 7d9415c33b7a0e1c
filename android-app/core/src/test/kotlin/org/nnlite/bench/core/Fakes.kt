package org.nnlite.bench.core

/**
 * A clock that only moves when told: the fake engine advances it inside invoke(), so a test can
 * prove which calls fall inside the timed region.
 */
class ScriptedClock(var now: Long = 1_000_000L) : NanoClock {
    override fun nanos(): Long = now
}

/**
 * An Engine scripted per backend: [failLoad]/[failAllocate] name backends whose load/allocate
 * throws; each invoke costs [invokeNs] (or the next value of [invokeScript]).
 */
class FakeEngine(
    private val clock: ScriptedClock,
    var invokeNs: Long = 2_000_000L,
    var invokeScript: ArrayDeque<Long> = ArrayDeque(),
    var loadNs: Long = 30_000_000L,
    var allocateNs: Long = 5_000_000L,
    val failLoad: Map<Backend, Exception> = emptyMap(),
    val failAllocate: Map<Backend, Exception> = emptyMap(),
    var failInvokeAt: Int = -1,
    var runtimeFallback: Pair<Backend, String>? = null,
    val inputs: List<TensorInfo> = listOf(TensorInfo(listOf(1, 3, 8, 8), "float32", 768)),
    val outputs: List<TensorInfo> = listOf(TensorInfo(listOf(1, 10), "float32", 40)),
) : Engine {
    val calls = mutableListOf<String>()
    var invokes = 0
    var loaded: Backend? = null
    var preparedSeed: Long? = null

    override fun load(modelPath: String, backend: Backend, threads: Int) {
        calls += "load:${backend.wire}:$threads"
        clock.now += loadNs
        failLoad[backend]?.let { throw it }
        loaded = backend
    }

    override fun allocate() {
        calls += "allocate"
        clock.now += allocateNs
        failAllocate[loaded]?.let { throw it }
    }

    override fun release() {
        calls += "release"
        loaded = null
    }

    override fun inputs() = inputs

    override fun outputs() = outputs

    override fun prepareInputs(seed: Long) {
        calls += "prepare:$seed"
        preparedSeed = seed
        clock.now += 777_777L // untimed work: must not show up in any sample
    }

    override fun invoke() {
        check(loaded != null) { "invoke without an interpreter" }
        if (invokes == failInvokeAt) throw IllegalStateException("Internal error: Failed to run on the given Interpreter")
        invokes++
        clock.now += invokeScript.removeFirstOrNull() ?: invokeNs
    }

    override fun runtimeFallback() = runtimeFallback
}

/** Records log lines as the logcat would show them. */
class RecordingLog : BenchLog {
    val lines = mutableListOf<String>()
    override fun info(message: String) { lines += "I $message" }
    override fun error(message: String, error: Throwable?) { lines += "E $message" }
}

val TEST_DEVICE = DeviceInfo(
    manufacturer = "Google", model = "Pixel 8", brand = "google", device = "shiba", product = "shiba",
    board = "shiba", hardware = "shiba", socManufacturer = "Google", socModel = "Tensor G3",
    abis = listOf("arm64-v8a"), sdkInt = 35, release = "15", buildId = "AP4A.250105.002",
    fingerprint = "google/shiba/shiba:15/AP4A.250105.002/12701944:user/release-keys",
)
