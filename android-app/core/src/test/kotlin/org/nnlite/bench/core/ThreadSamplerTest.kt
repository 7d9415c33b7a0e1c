package org.nnlite.bench.core

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.util.concurrent.atomic.AtomicInteger

/** The sampling loop on a real side thread and the real clock; bodies wait on conditions, never on sleeps. */
class ThreadSamplerTest {
    private val clock = NanoClock { System.nanoTime() }

    /** Counts reads and records the thread each came from; fails its [failAt]-th read. */
    private class CountingSource(private val failAt: Int = -1) : BatterySource {
        val reads = AtomicInteger()
        val threads: MutableList<String> = java.util.Collections.synchronizedList(mutableListOf())

        override fun sources() = CounterSources("test", null, null)

        override fun read(atNs: Long): BatteryReading {
            val n = reads.incrementAndGet()
            threads += Thread.currentThread().name
            if (n == failAt) throw SecurityException("battery service refused the read")
            return BatteryReading(atNs, -n.toLong(), null, 4_000_000)
        }

        override fun state() = onBattery()
    }

    private fun waitFor(what: String, condition: () -> Boolean) {
        val deadline = System.nanoTime() + 10_000_000_000L
        while (!condition()) {
            check(System.nanoTime() < deadline) { "timed out waiting for $what" }
            Thread.onSpinWait()
        }
    }

    @Test
    fun `readings come from the side thread at the period, framed by one at each end of the window`() {
        val source = CountingSource()
        val periodNs = 2_000_000L
        val caller = Thread.currentThread().name
        val sampled = ThreadSampler(source, clock, periodNs).sample {
            waitFor("8 readings") { source.reads.get() >= 8 }
            "body result"
        }
        assertEquals("body result", sampled.value)
        assertNull(sampled.error)
        val r = sampled.readings
        assertEquals(source.reads.get(), r.size) // every read is in the window's list, none after it closed
        assertTrue(r.size >= 9, "${r.size} readings")
        assertEquals(caller, source.threads.first())
        assertEquals(caller, source.threads.last())
        assertTrue(source.threads.subList(1, r.size - 1).all { it == "nnlite-battery" }, source.threads.toString())
        assertTrue(r.zipWithNext().all { (a, b) -> b.atNs >= a.atNs })
        // A fixed rate that may slip later but never runs ahead: the k-th side reading comes no sooner than
        // k periods after the first (the closing reading, at the window's end, may come any time).
        val early = (1 until r.size - 1).filter { k -> r[k].atNs - r[0].atNs < k * periodNs }
        assertEquals(emptyList<Int>(), early)
        assertEquals(listOf(-1L, -2L, -3L), r.take(3).map { it.currentUa })
    }

    @Test
    fun `a failing read stops the sampling and is reported, the body still completes`() {
        val source = CountingSource(failAt = 3)
        val sampled = ThreadSampler(source, clock, 1_000_000L).sample {
            waitFor("the failing read") { source.reads.get() >= 3 }
            42
        }
        assertEquals(42, sampled.value)
        assertEquals("java.lang.SecurityException: battery service refused the read", sampled.error)
        assertEquals(2, sampled.readings.size)
        assertEquals(3, source.reads.get()) // no read after the failure, not even the closing one
    }

    @Test
    fun `an exception from the body still stops the side thread`() {
        val source = CountingSource()
        val sampler = ThreadSampler(source, clock, 1_000_000L)
        val thrown = runCatching { sampler.sample { waitFor("2 readings") { source.reads.get() >= 2 }; error("inference failed") } }
        assertEquals("inference failed", thrown.exceptionOrNull()?.message)
        val after = source.reads.get()
        assertTrue(Thread.getAllStackTraces().keys.none { it.name == "nnlite-battery" && it.isAlive }, "sampler thread still running")
        assertEquals(after, source.reads.get())
    }
}
