package org.nnlite.bench.core

/**
 * What a delegate took of the graph, read from LiteRT's own log line (logcat tag `tflite`):
 *   "Replacing 12 out of 15 node(s) with delegate (TfLiteGpuDelegateV2) node, yielding 2 partitions for the whole graph."
 * or, from older runtimes, without the total:
 *   "Replacing 12 node(s) with delegate (TfLiteGpuDelegateV2) node, yielding 2 partitions."
 * The first line after the interpreter was created describes the backend's delegate (it sees the
 * whole graph); later lines (e.g. XNNPACK taking what a GPU delegate left) are kept in [applied].
 */
data class DelegateApplication(val delegate: String, val delegatedNodes: Int, val totalNodes: Int?, val partitions: Int) {
    fun toMap(): Map<String, Any?> = linkedMapOf(
        "delegate" to delegate, "delegated_nodes" to delegatedNodes, "total_nodes" to totalNodes, "partitions" to partitions,
    )
}

/**
 * [backends]: the delegates a runtime names without node counts (ExecuTorch's method metadata); then
 * the counts and [full] are null (unknown), and `delegate` is the first backend named.
 */
class Delegation(val source: String, val applied: List<DelegateApplication>, val error: String? = null,
                 val backends: List<String>? = null) {
    private val first: DelegateApplication? get() = applied.firstOrNull()

    /** The whole graph went to one delegate; null when that cannot be told (no total in the log, or no log). */
    val full: Boolean?
        get() = when {
            error != null || backends != null -> null
            first == null -> false
            first!!.totalNodes == null -> null
            else -> first!!.delegatedNodes == first!!.totalNodes
        }

    private val countsUnknown: Boolean get() = error != null || backends != null

    fun toMap(): Map<String, Any?> = linkedMapOf<String, Any?>(
        "source" to source,
        "delegate" to (first?.delegate ?: backends?.firstOrNull()),
        "delegated_nodes" to if (countsUnknown) null else (first?.delegatedNodes ?: 0),
        "total_nodes" to first?.totalNodes,
        "partitions" to if (countsUnknown) null else (first?.partitions ?: 0),
        "full" to full,
        "applied" to applied.map { it.toMap() },
        "error" to error,
    ).also { m -> backends?.let { m["backends"] = it } }

    /** The one-line reason a run with require_full_delegation fails, or null if the graph is whole on the delegate. */
    fun fullDelegationFailure(backend: Backend): String? {
        if (full == true) return null
        val f = first
        return when {
            error != null -> "require_full_delegation: cannot tell what ${backend.wire} took ($error)"
            backends != null -> "require_full_delegation: the runtime names the program's delegates " +
                "(${backends.joinToString().ifEmpty { "none" }}) but not how many nodes they took"
            f == null -> "require_full_delegation: no delegate took any node for backend ${backend.wire}"
            f.totalNodes == null -> "require_full_delegation: the runtime logged ${f.delegatedNodes} node(s) for ${f.delegate} but not the graph's size"
            else -> "require_full_delegation: ${f.delegate} took ${f.delegatedNodes} of ${f.totalNodes} nodes (${f.partitions} partitions)"
        }
    }

    companion object {
        const val LOG_TAG = "tflite"
        private val LINE = Regex(
            """Replacing (\d+)(?: out of (\d+))? node\(s\) with delegate \(([^)]*)\) node, yielding (\d+) partitions""",
        )

        fun parse(lines: List<String>, source: String = "logcat"): Delegation = Delegation(source, lines.mapNotNull { line ->
            LINE.find(line)?.destructured?.let { (n, total, name, parts) ->
                DelegateApplication(name, n.toInt(), total.toIntOrNull(), parts.toInt())
            }
        })

        fun unreadable(source: String, why: String) = Delegation(source, emptyList(), why)

        /** What ExecuTorch's `MethodMetadata.backends` says: the delegates, no counts. */
        fun methodBackends(backends: List<String>) = Delegation(METHOD_METADATA, emptyList(), null, backends)

        const val METHOD_METADATA = "method metadata"

        // `logcat -v epoch`: "  1760000000.123  4321  4340 I tflite  : message"
        private val EPOCH_LINE = Regex("""^\s*(\d+)\.(\d{3})\d*\s+\d+\s+\d+\s+[VDIWEF]\s+(\S+)\s*:\s?(.*)$""")

        /**
         * The messages of `logcat -v epoch` output logged at or after [sinceMs] (epoch ms) under
         * [tag]: one load attempt's lines, without those of an earlier attempt in the same process.
         */
        fun messagesSince(logcat: String, sinceMs: Long, tag: String = LOG_TAG): List<String> =
            logcat.lineSequence().mapNotNull { EPOCH_LINE.find(it)?.destructured }
                .filter { (sec, ms, t, _) -> t == tag && sec.toLong() * 1000 + ms.toLong() >= sinceMs }
                .map { (_, _, _, message) -> message.trim() }
                .toList()
    }
}
