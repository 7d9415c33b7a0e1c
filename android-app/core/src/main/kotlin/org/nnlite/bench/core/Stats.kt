package org.nnlite.bench.core

/**
 * Latency statistics, defined exactly as nnlite_tui/core/stats.py (PROTOCOL.md, "Statistics"):
 * mean and population std from exactly rounded sums (Python's math.fsum), median/p90/p99 by
 * linear interpolation between closest ranks (rank = q * (n - 1), numpy's default), min, max.
 * A cross-language test feeds both implementations the same samples.
 */
data class Summary(
    val count: Int,
    val meanNs: Double,
    val medianNs: Double,
    val p90Ns: Double,
    val p99Ns: Double,
    val stdNs: Double,
    val minNs: Double,
    val maxNs: Double,
) {
    /** The report's `stats` object, keyed and ordered as Python's STAT_KEYS. */
    fun toMap(): Map<String, Any> = linkedMapOf(
        "count" to count,
        "mean_ns" to meanNs,
        "median_ns" to medianNs,
        "p90_ns" to p90Ns,
        "p99_ns" to p99Ns,
        "std_ns" to stdNs,
        "min_ns" to minNs,
        "max_ns" to maxNs,
    )
}

object Stats {
    /** The q-quantile (0 <= q <= 1) of already sorted samples, by linear interpolation. */
    fun percentile(sorted: DoubleArray, q: Double): Double {
        require(sorted.isNotEmpty()) { "percentile of no samples" }
        require(q in 0.0..1.0) { "quantile $q outside [0, 1]" }
        val rank = q * (sorted.size - 1)
        val low = Math.floor(rank).toInt()
        val high = minOf(low + 1, sorted.size - 1)
        val frac = rank - low
        return sorted[low] + (sorted[high] - sorted[low]) * frac
    }

    fun summarize(samplesNs: LongArray): Summary {
        require(samplesNs.isNotEmpty()) { "no samples to summarize" }
        val ordered = DoubleArray(samplesNs.size) { samplesNs[it].toDouble() }
        ordered.sort()
        val n = ordered.size
        val mean = fsum(ordered) / n
        val variance = fsum(DoubleArray(n) { val d = ordered[it] - mean; d * d }) / n
        return Summary(
            count = n,
            meanNs = mean,
            medianNs = percentile(ordered, 0.5),
            p90Ns = percentile(ordered, 0.9),
            p99Ns = percentile(ordered, 0.99),
            stdNs = Math.sqrt(variance),
            minNs = ordered[0],
            maxNs = ordered[n - 1],
        )
    }

    /**
     * Exactly rounded sum of finite doubles (Shewchuk's algorithm, as CPython's math.fsum), so the
     * mean and std agree with Python's to the last bit rather than to a tolerance.
     */
    fun fsum(values: DoubleArray): Double {
        val partials = DoubleArray(values.size + 1)
        var count = 0
        for (value in values) {
            require(value.isFinite()) { "fsum of a non-finite value: $value" }
            var x = value
            var i = 0
            for (j in 0 until count) {
                var y = partials[j]
                if (Math.abs(x) < Math.abs(y)) { val t = x; x = y; y = t }
                val hi = x + y
                val lo = y - (hi - x)
                if (lo != 0.0) partials[i++] = lo
                x = hi
            }
            partials[i] = x
            count = i + 1
        }
        if (count == 0) return 0.0
        // Sum the partials from the top, correcting the final rounding (half-even) as CPython does.
        var n = count - 1
        var hi = partials[n]
        var lo = 0.0
        while (n > 0) {
            val x = hi
            val y = partials[--n]
            hi = x + y
            val yr = hi - x
            lo = y - yr
            if (lo != 0.0) break
        }
        if (n > 0 && ((lo < 0.0 && partials[n - 1] < 0.0) || (lo > 0.0 && partials[n - 1] > 0.0))) {
            val y = lo * 2.0
            val x = hi + y
            val yr = x - hi
            if (y == yr) hi = x
        }
        return hi
    }
}
