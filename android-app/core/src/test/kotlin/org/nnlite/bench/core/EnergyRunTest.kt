package org.nnlite.bench.core

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import java.io.File

/** The energy windows inside a whole run: extras, timing of the windows, the report's block, the log line. */
class EnergyRunTest {
    @TempDir
    lateinit var dir: File

    private val clock = ScriptedClock()
    private val log = RecordingLog()
    private val idle = trace(5.0, current = alternating(-200_000, 10_000))
    private val load = trace(5.0, current = alternating(-700_000, 10_000))

    private fun extras(vararg more: Pair<String, Any?>) = mapOf(
        "model_path" to "/m.tflite", "report_path" to File(dir, "e.json").path, "run_id" to "e1",
        "runs" to 3, "min_seconds" to 0.0f, "warmup" to 0, "warmup_seconds" to 0.0f,
    ) + more

    @Suppress("UNCHECKED_CAST")
    private fun run(engine: FakeEngine, meter: EnergyMeter?, vararg more: Pair<String, Any?>): Map<String, Any?> {
        BenchRunner(engine, { TEST_DEVICE }, log, clock, { 1L }, { true }, FakeProbe(), meter).execute(extras(*more))
        return Json.parse(File(dir, "e.json").readText()) as Map<String, Any?>
    }

    @Test
    fun `the load window runs inferences back to back for energy_seconds, after an idle window as long`() {
        val engine = FakeEngine(clock, invokeNs = 5_000_000) // 5 ms per inference: 1000 in 5 s
        val (meter, sampler) = scriptedMeter(clock, idle, load)
        val start = clock.now
        val r = run(engine, meter, "energy" to true, "energy_seconds" to 5.0f)
        val e = r["energy"] as Map<*, *>
        assertEquals(true, e["valid"], e["reason"].toString())
        assertEquals(2, sampler.calls)
        assertEquals(1000L, (e["load"] as Map<*, *>)["inferences"])
        assertEquals(1 + 3 + 1000, engine.invokes) // first + timed + the load window's
        assertEquals(5.0, (e["load"] as Map<*, *>)["seconds"])
        assertEquals(5.0, (e["idle"] as Map<*, *>)["seconds"])
        assertEquals(10.0, e["energy_per_inference_mj"])
        assertEquals(2000.0, e["power_delta_mw"])
        // load + allocate + prepare + first + timed, then the settle pause and both windows.
        assertEquals(30_000_000L + 5_000_000 + 777_777 + 4 * 5_000_000 + 1_000_000_000 + 2 * 5_000_000_000, clock.now - start)
        assertTrue(log.lines.contains("I ENERGY run_id=e1 valid=true counter=current_now energy_per_inference_mj=10.0 reason=null"),
            log.lines.toString())
    }

    @Test
    fun `the energy block carries the samples, their rate, the counters, the sign and the battery before and after`() {
        val before = BatteryState(1L, 81.0, 30.5, 4010, 0, 3)
        val after = BatteryState(2L, 80.0, 32.0, 3990, 0, 3)
        val (meter, _) = scriptedMeter(clock, idle, load, ScriptedBattery(ArrayDeque(listOf(before, after))))
        val e = run(FakeEngine(clock, invokeNs = 5_000_000), meter, "energy" to "true", "energy_seconds" to "5") ["energy"] as Map<*, *>
        assertEquals("device", e["source"])
        assertEquals("current_now", e["counter"])
        assertEquals("discharge_negative", e["sign_convention"])
        assertEquals(mapOf("current_now" to "BatteryManager.BATTERY_PROPERTY_CURRENT_NOW",
            "charge_counter" to "BatteryManager.BATTERY_PROPERTY_CHARGE_COUNTER",
            "voltage" to "/sys/class/power_supply/battery/voltage_now"), e["counter_sources"])
        assertEquals(listOf(5.0, 1.0, 20L), listOf(e["window_seconds"], e["settle_seconds"], e["sample_period_ms"]))
        assertEquals(mapOf("at_ms" to 1L, "level_percent" to 81.0, "temperature_c" to 30.5, "voltage_mv" to 4010L, "plugged" to 0L,
            "status" to 3L, "charging" to false), e["battery_before"])
        assertEquals(32.0, (e["battery_after"] as Map<*, *>)["temperature_c"])
        assertEquals(false, e["charging"])
        val w = e["idle"] as Map<*, *>
        assertEquals(251L, w["readings"])
        assertEquals(50.0, w["rate_hz"])
        assertEquals(50L, w["current_updates"])
        assertEquals(-200_000.0, w["mean_current_ua"])
        val samples = w["samples"] as Map<*, *>
        assertEquals(listOf(0L, 20_000_000L, 40_000_000L), (samples["t_ns"] as List<*>).take(3))
        assertEquals(idle.map { it.currentUa }, samples["current_ua"])
        assertEquals(251, (samples["charge_uah"] as List<*>).size)
        assertTrue((samples["charge_uah"] as List<*>).all { it == null })
        assertEquals(emptyList<String>(), e["reason_codes"])
    }

    @Test
    fun `a charging phone gives an invalid block with that reason and no energy figure, the timing stands`() {
        val usb = BatteryState(1L, 81.0, 30.5, 4010, 2, 2)
        val (meter, _) = scriptedMeter(clock, idle, load, ScriptedBattery(ArrayDeque(listOf(usb, usb))))
        val r = run(FakeEngine(clock, invokeNs = 5_000_000), meter, "energy" to true, "energy_seconds" to 5.0f)
        assertEquals(true, r["valid"])
        val e = r["energy"] as Map<*, *>
        assertEquals(false, e["valid"])
        assertEquals(listOf("charging"), e["reason_codes"])
        assertEquals(true, e["charging"])
        for (key in listOf("power_idle_mw", "power_load_mw", "idle_noise_mw", "power_delta_mw", "energy_per_inference_mj")) {
            assertTrue(e.containsKey(key) && e[key] == null, key)
        }
        assertTrue(log.lines.any { it.startsWith("I ENERGY run_id=e1 valid=false counter=current_now energy_per_inference_mj=null reason=the device was on a charger") },
            log.lines.toString())
    }

    @Test
    fun `no energy extra, no energy windows and no block`() {
        val engine = FakeEngine(clock)
        val (meter, sampler) = scriptedMeter(clock, idle, load)
        val r = run(engine, meter)
        assertFalse(r.containsKey("energy"))
        assertEquals(0, sampler.calls)
        assertEquals(4, engine.invokes)
        assertFalse(log.lines.any { it.contains("ENERGY") })
    }

    @Test
    fun `a run that fails has no energy block, even when energy was asked for`() {
        val (meter, sampler) = scriptedMeter(clock, idle, load)
        val r = run(FakeEngine(clock, failInvokeAt = 0), meter, "energy" to true)
        assertEquals("invoke", r["error_stage"])
        assertFalse(r.containsKey("energy"))
        assertEquals(0, sampler.calls)
    }

    @Test
    fun `an inference failing inside the load window fails the run at invoke`() {
        val (meter, _) = scriptedMeter(clock, idle, load)
        val r = run(FakeEngine(clock, invokeNs = 5_000_000, failInvokeAt = 100), meter, "energy" to true, "energy_seconds" to 5.0f)
        assertEquals(listOf(false, "invoke"), listOf(r["valid"], r["error_stage"]))
        assertFalse(r.containsKey("energy"))
    }

    @Test
    fun `energy extras are checked like the others`() {
        fun bad(vararg more: Pair<String, Any?>) = assertThrows(ArgsException::class.java) { BenchArgs.parse(extras(*more)) }.message!!
        assertEquals("energy_seconds must be in 1.0..600.0, got 0.5", bad("energy" to true, "energy_seconds" to 0.5f))
        assertEquals("energy_seconds must be in 1.0..600.0, got 601.0", bad("energy_seconds" to 601))
        assertEquals("energy must be true or false, got 'yes'", bad("energy" to "yes"))
        assertNull(BenchArgs.parse(extras()).energySeconds)
        assertNull(BenchArgs.parse(extras("energy" to false, "energy_seconds" to 30)).energySeconds)
        assertEquals(EnergyRun.DEFAULT_SECONDS, BenchArgs.parse(extras("energy" to true)).energySeconds)
        assertEquals(2.5, BenchArgs.parse(extras("energy" to true, "energy_seconds" to 2.5f)).energySeconds)
    }
}
