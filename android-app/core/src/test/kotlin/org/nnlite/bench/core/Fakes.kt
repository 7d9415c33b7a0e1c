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
    val failLoad: Map<Backend, Throwable> = emptyMap(),
    val failAllocate: Map<Backend, Exception> = emptyMap(),
    var failInvokeAt: Int = -1,
    var runtimeFallback: Pair<Backend, String>? = null,
    val inputs: List<TensorInfo> = listOf(TensorInfo(listOf(1, 3, 8, 8), "float32", 768)),
    val outputs: List<TensorInfo> = listOf(TensorInfo(listOf(1, 10), "float32", 40)),
    /** The runtime's own share of each invoke (the rest is the Java API's copies); null: no native timing. */
    var nativeFraction: Double? = 0.9,
    /** LiteRT's `tflite` log lines per backend, as the app reads them after loading. */
    var delegateLog: Map<Backend, List<String>> = mapOf(
        Backend.XNNPACK to listOf("Replacing 5 out of 5 node(s) with delegate (TfLiteXNNPackDelegate) node, yielding 1 partitions for the whole graph."),
    ),
) : Engine {
    private var lastNative: Long? = null
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

    private var filled: List<FillRecord>? = null

    override fun inputFill(): List<FillRecord>? = filled

    override fun prepareInputs(seed: Long, ranges: List<InputRange?>) {
        calls += "prepare:$seed"
        preparedSeed = seed
        // Real buffers, filled as the app fills them: the report's input_fill comes from their values.
        filled = InputFill.fillAll(inputs.map { InputFill.allocate(it.numBytes) }, inputs, seed, ranges)
        clock.now += 777_777L // untimed work: must not show up in any sample
    }

    override fun invoke() {
        check(loaded != null) { "invoke without an interpreter" }
        if (invokes == failInvokeAt) throw IllegalStateException("Internal error: Failed to run on the given Interpreter")
        invokes++
        val dt = invokeScript.removeFirstOrNull() ?: invokeNs
        clock.now += dt
        lastNative = nativeFraction?.let { (dt * it).toLong() }
    }

    override fun lastNativeNs(): Long? = lastNative

    override fun delegation(): Delegation = Delegation.parse(delegateLog[loaded] ?: emptyList())

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

/** Scripted device state: each conditions() call takes the next thermal status of [statuses]. */
class FakeProbe(
    private val statuses: ArrayDeque<Int?> = ArrayDeque(listOf(0, 0)),
    private val headroom: Double? = 0.4,
    private val sustainedSupported: Boolean? = true,
) : DeviceProbe {
    var rssKb = 50_000L
    val calls = mutableListOf<String>()

    override fun conditions(): ConditionsSnapshot {
        calls += "conditions"
        return ConditionsSnapshot(1_760_000_000_000L, statuses.removeFirstOrNull(), headroom, 31.5, true, true, false)
    }

    override fun memory(): MemorySnapshot {
        calls += "memory"
        rssKb += 10_000
        return MemorySnapshot.fromProcStatus("Name:\tbench\nVmHWM:\t  ${rssKb + 5} kB\nVmRSS:\t  $rssKb kB\n", 8_192, 6_000)
    }

    override fun sustainedPerformance(): SustainedPerformance {
        calls += "sustained"
        return SustainedPerformance(sustainedSupported, sustainedSupported == true)
    }
}
