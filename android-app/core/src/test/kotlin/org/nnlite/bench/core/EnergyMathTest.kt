package org.nnlite.bench.core

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/**
 * The energy arithmetic on hand-made traces whose answer is known: an idle window at 200 mA and a
 * load window at 700 mA, both at 4.0 V, give 800 and 2800 mW; over 5 s and 1000 inferences that is
 * 2000 mW * 5 s / 1000 = 10 mJ per inference.
 */
class EnergyMathTest {
    private val seconds = 5.0
    private val windowNs = 5_000_000_000L

    private fun evaluate(
        idle: List<BatteryReading>, load: List<BatteryReading>, inferences: Int = 1000,
        before: BatteryState = onBattery(), after: BatteryState = onBattery(), error: String? = null,
    ) = EnergyMath.evaluate(EnergyWindow(idle, windowNs), EnergyWindow(load, windowNs), inferences, before, after, error)

    private fun codes(r: EnergyMath.Result) = r.reasons.map { it.first }.distinct()

    @Test
    fun `a known current trace gives the known energy, with AOSP's negative discharge`() {
        // 200 mA and 700 mA out of the battery, +-10 mA around it, changing every 100 ms.
        val r = evaluate(trace(seconds, current = alternating(-200_000, 10_000)), trace(seconds, current = alternating(-700_000, 10_000)))
        assertTrue(r.valid, r.reasons.toString())
        assertEquals("current_now", r.counter)
        assertEquals("discharge_negative", r.signConvention)
        assertEquals(800.0, r.powerIdleMw)
        assertEquals(2800.0, r.powerLoadMw)
        assertEquals(2000.0, r.powerDeltaMw)
        assertEquals(40.0, r.idleNoiseMw) // 10 mA of swing at 4 V
        assertEquals(10.0, r.energyPerInferenceMj)
    }

    @Test
    fun `a vendor that reports discharge as positive gives the same energy`() {
        val r = evaluate(trace(seconds, current = alternating(200_000, 10_000)), trace(seconds, current = alternating(700_000, 10_000)))
        assertTrue(r.valid, r.reasons.toString())
        assertEquals("discharge_positive", r.signConvention)
        assertEquals(10.0, r.energyPerInferenceMj)
    }

    @Test
    fun `energy per inference scales with the window and the inferences in it`() {
        val r = evaluate(trace(seconds, current = alternating(-200_000, 10_000)), trace(seconds, current = alternating(-700_000, 10_000)),
            inferences = 250)
        assertEquals(40.0, r.energyPerInferenceMj)
    }

    @Test
    fun `a charger makes it invalid and no power is shown, since the counters describe the charger`() {
        val usb = BatteryState(1L, 80.0, 31.5, 4000, 2, 2)
        val r = evaluate(trace(seconds, current = alternating(150_000, 10_000)), trace(seconds, current = alternating(90_000, 10_000)),
            before = usb)
        assertFalse(r.valid)
        assertEquals(listOf("charging"), codes(r))
        assertEquals(true, r.charging)
        assertNull(r.signConvention)
        assertNull(r.powerIdleMw)
        assertNull(r.powerLoadMw)
        assertNull(r.energyPerInferenceMj)
        assertTrue(r.reasons[0].second.contains("plugged 2/0"), r.reasons[0].second)
    }

    @Test
    fun `charging status alone counts, and an unreadable charging state is a reason too`() {
        val charging = BatteryState(1L, 80.0, 31.5, 4000, 0, BatteryState.STATUS_CHARGING)
        val good = { after: BatteryState ->
            evaluate(trace(seconds, current = alternating(-200_000, 10_000)), trace(seconds, current = alternating(-700_000, 10_000)), after = after)
        }
        assertEquals(listOf("charging"), codes(good(charging)))
        val unknown = good(BatteryState(1L, null, null, null, null, null))
        assertEquals(listOf("charging_unknown"), codes(unknown))
        assertNull(unknown.charging)
        assertNull(unknown.energyPerInferenceMj)
    }

    @Test
    fun `counters that never change are invalid with that reason`() {
        val r = evaluate(trace(seconds, current = { -300_000L }, charge = { 2_500_000L }), trace(seconds, current = { -300_000L }, charge = { 2_500_000L }))
        assertEquals(listOf("counter_constant"), codes(r))
        assertNull(r.counter)
        assertNull(r.powerIdleMw)
        assertNull(r.energyPerInferenceMj)
    }

    @Test
    fun `a current that changes only under load is not enough, even with a live charge counter absent`() {
        val r = evaluate(trace(seconds, current = { -300_000L }), trace(seconds, current = alternating(-700_000, 10_000)))
        assertEquals(listOf("counter_constant"), codes(r))
    }

    @Test
    fun `with no counter readable at all the reason says so`() {
        val r = evaluate(trace(seconds), trace(seconds))
        assertEquals(listOf("no_counter"), codes(r))
    }

    @Test
    fun `too few readings in a window is invalid`() {
        val r = evaluate(trace(0.08, current = alternating(-200_000, 10_000, every = 1)), trace(seconds, current = alternating(-700_000, 10_000)))
        assertEquals(listOf("too_few_samples"), codes(r))
        assertTrue(r.reasons[0].second.startsWith("only 5 readings in the idle window"), r.reasons.toString())
        assertNull(r.energyPerInferenceMj)
    }

    @Test
    fun `a counter that updates too rarely gives too few samples, however many readings`() {
        // 251 readings, but the current changes only every 1.5 s: 3 updates.
        val r = evaluate(trace(seconds, current = alternating(-200_000, 10_000, every = 75)), trace(seconds, current = alternating(-700_000, 10_000)))
        assertEquals(listOf("too_few_samples"), codes(r))
        assertEquals("current_now changed only 3 times in the idle window (at least 5 needed)", r.reasons[0].second)
    }

    @Test
    fun `an idle window noisier than the load difference is invalid, with the measured powers kept`() {
        // Idle swings 300 +- 200 mA (800 mW of noise at 4 V); the load is only 100 mA (400 mW) above it.
        val r = evaluate(trace(seconds, current = alternating(-300_000, 200_000)), trace(seconds, current = alternating(-400_000, 10_000)))
        assertEquals(listOf("noisy_idle"), codes(r))
        assertEquals(1200.0, r.powerIdleMw)
        assertEquals(1600.0, r.powerLoadMw)
        assertEquals(800.0, r.idleNoiseMw)
        assertNull(r.powerDeltaMw)
        assertNull(r.energyPerInferenceMj)
    }

    @Test
    fun `a load below idle is never a negative energy`() {
        val r = evaluate(trace(seconds, current = alternating(-700_000, 10_000)), trace(seconds, current = alternating(-200_000, 10_000)))
        assertEquals(listOf("noisy_idle"), codes(r))
        assertNull(r.energyPerInferenceMj)
    }

    @Test
    fun `currents of opposite signs leave the convention undetermined`() {
        val r = evaluate(trace(seconds, current = alternating(50_000, 10_000)), trace(seconds, current = alternating(-700_000, 10_000)))
        assertEquals(listOf("sign_undetermined"), codes(r))
        assertNull(r.signConvention)
        assertNull(r.powerIdleMw)
    }

    @Test
    fun `the charge counter is used when the current never changes, between its updates`() {
        // 10 µAh every 180 ms = 200 mA idle; 35 µAh every 180 ms = 700 mA under load.
        val r = evaluate(trace(seconds, current = { -1L }, charge = falling(10, 9)), trace(seconds, current = { -1L }, charge = falling(35, 9)))
        assertTrue(r.valid, r.reasons.toString())
        assertEquals("charge_counter", r.counter)
        assertNull(r.signConvention) // a level falls on discharge whatever the vendor's current sign
        assertEquals(800.0, r.powerIdleMw)
        assertEquals(2800.0, r.powerLoadMw)
        // One 10 µAh step over the 26 steps (4.68 s) between the idle window's first and last update.
        assertEquals(10 * 3.6e12 / 4.68e9 * 4e6 / 1e9, r.idleNoiseMw)
        assertEquals(10.0, r.energyPerInferenceMj)
    }

    @Test
    fun `a charge counter that rises is a charging battery, whatever the broadcast says`() {
        val r = evaluate(trace(seconds, charge = { i -> 2_000_000L + 10 * (i / 9) }), trace(seconds, charge = falling(35, 9)))
        assertEquals(listOf("sign_undetermined"), codes(r))
    }

    @Test
    fun `without a voltage in the readings the broadcast's voltage is used, and without either it is invalid`() {
        val idle = trace(seconds, current = alternating(-200_000, 10_000), voltage = null)
        val load = trace(seconds, current = alternating(-700_000, 10_000), voltage = null)
        val fromBroadcast = evaluate(idle, load, before = onBattery(voltageMv = 3900), after = onBattery(voltageMv = 4100))
        assertTrue(fromBroadcast.valid, fromBroadcast.reasons.toString())
        assertEquals(4_000_000.0 to "battery broadcast", fromBroadcast.idleVoltage)
        assertEquals(10.0, fromBroadcast.energyPerInferenceMj)
        val none = evaluate(idle, load, before = onBattery(voltageMv = null), after = onBattery(voltageMv = null))
        assertEquals(listOf("no_voltage"), codes(none))
    }

    @Test
    fun `the voltage is weighted by time like the current`() {
        // 3.9 V for the first half of the idle window's span, 4.1 V for the second: 4.0 V.
        val r = evaluate(trace(seconds, current = alternating(-200_000, 10_000), voltage = { i -> if (i < 125) 3_900_000 else 4_100_000 }),
            trace(seconds, current = alternating(-700_000, 10_000)))
        assertEquals(4_000_000.0 to "readings", r.idleVoltage)
    }

    @Test
    fun `a failed counter read is a reason of its own`() {
        val r = evaluate(trace(seconds, current = alternating(-200_000, 10_000)), trace(seconds, current = alternating(-700_000, 10_000)),
            error = "java.lang.SecurityException: denied")
        assertEquals(listOf("counter_read_failed"), codes(r))
        assertNull(r.energyPerInferenceMj)
    }

    @Test
    fun `every applicable reason is listed, in the documented order`() {
        val usb = BatteryState(1L, 80.0, 31.5, null, 2, 2)
        val r = evaluate(trace(0.06, voltage = null), trace(seconds, voltage = null), before = usb, after = usb)
        assertEquals(listOf("charging", "no_counter", "too_few_samples", "no_voltage"), codes(r))
        assertEquals(codes(r), EnergyMath.REASON_CODES.filter { it in codes(r) })
    }

    @Test
    fun `hold means weight each value by how long it held`() {
        val s = CounterSeries(longArrayOf(0, 10, 40, 50), longArrayOf(5, 1, 9, 100))
        assertEquals((5.0 * 10 + 1.0 * 30 + 9.0 * 10) / 50, s.holdMean)
        assertEquals(3, s.updates)
        assertEquals(4L, s.smallestStep)
        assertNull(CounterSeries(longArrayOf(7), longArrayOf(3)).holdMean)
    }
}
