package org.nnlite.bench.core

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Test

class StatsTest {
    @Test
    fun `four samples match numpy's linear percentiles and population std`() {
        val s = Stats.summarize(longArrayOf(4, 1, 3, 2))
        assertEquals(4, s.count)
        assertEquals(2.5, s.meanNs)
        assertEquals(2.5, s.medianNs)
        assertEquals(3.7, s.p90Ns, 1e-12)
        assertEquals(3.97, s.p99Ns, 1e-12)
        assertEquals(Math.sqrt(1.25), s.stdNs)
        assertEquals(1.0, s.minNs)
        assertEquals(4.0, s.maxNs)
    }

    @Test
    fun `one sample has every statistic equal to it and zero spread`() {
        val s = Stats.summarize(longArrayOf(1234567))
        listOf(s.meanNs, s.medianNs, s.p90Ns, s.p99Ns, s.minNs, s.maxNs).forEach { assertEquals(1234567.0, it) }
        assertEquals(0.0, s.stdNs)
    }

    @Test
    fun `odd count median is the middle sample`() {
        assertEquals(30.0, Stats.summarize(longArrayOf(50, 10, 30, 20, 40)).medianNs)
    }

    @Test
    fun `fsum is exactly rounded where naive summation is not`() {
        assertEquals(1.0, Stats.fsum(doubleArrayOf(1e16, 1.0, -1e16)))
        assertEquals(1.0, Stats.fsum(doubleArrayOf(1e100, 1.0, -1e100, 1e-100)))
        // Half-way case: the partials carry the 2^-50 that decides rounding up, as CPython does.
        assertEquals(9007199254740994.0, Stats.fsum(doubleArrayOf(Math.pow(2.0, 53.0), 1.0, Math.pow(2.0, -50.0))))
        val tenths = DoubleArray(10) { 0.1 }
        assertEquals(1.0, Stats.fsum(tenths)) // the naive sum is 0.9999999999999999
        assertEquals(0.0, Stats.fsum(DoubleArray(0)))
    }

    @Test
    fun `empty samples and bad quantiles are refused`() {
        assertThrows(IllegalArgumentException::class.java) { Stats.summarize(LongArray(0)) }
        assertThrows(IllegalArgumentException::class.java) { Stats.percentile(doubleArrayOf(1.0), 1.5) }
    }

    @Test
    fun `stats map has Python's STAT_KEYS in order`() {
        assertEquals(
            listOf("count", "mean_ns", "median_ns", "p90_ns", "p99_ns", "std_ns", "min_ns", "max_ns"),
            Stats.summarize(longArrayOf(1, 2)).toMap().keys.toList(),
        )
    }
}
