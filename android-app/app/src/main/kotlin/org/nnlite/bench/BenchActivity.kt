package org.nnlite.bench

import android.app.Activity
import android.app.KeyguardManager
import android.content.Context
import android.content.Intent
import android.os.Build
import android.os.Bundle
import android.os.PowerManager
import android.os.Process
import android.util.Log
import android.view.WindowManager
import android.widget.TextView
import org.nnlite.bench.core.BenchRunner
import org.nnlite.bench.core.EnergyMeter
import org.nnlite.bench.core.EnergyRun
import org.nnlite.bench.core.ThreadSampler
import org.nnlite.bench.core.Report
import org.nnlite.bench.core.SustainedPerformance
import java.util.concurrent.atomic.AtomicBoolean

/**
 * The app's only component (PROTOCOL.md): started by
 * `am start -S -W -n org.nnlite.bench/.BenchActivity --es model_path ... --es report_path ... --es run_id ...`,
 * it runs one benchmark on a worker thread under a partial wake lock, writes the report
 * (<report_path>.tmp, then rename), logs under tag NNLiteBench, and finishes itself.
 */
class BenchActivity : Activity() {
    private lateinit var status: TextView
    private lateinit var sustained: SustainedPerformance

    @Volatile
    private var resumed = false

    override fun onCreate(savedInstanceState: Bundle?) {
        super.onCreate(savedInstanceState)
        window.addFlags(WindowManager.LayoutParams.FLAG_KEEP_SCREEN_ON)
        showOverKeyguard()
        sustained = AndroidProbe.requestSustainedPerformance(this)
        // The app-specific external directory (where reports go by default) exists only once the
        // app has asked for it; on API 30+ the app could not create it itself.
        getExternalFilesDir(null)
        status = TextView(this).apply {
            setPadding(48, 48, 48, 48)
            text = "NNLite Bench ${Report.APP_VERSION}"
        }
        setContentView(status)
        start(intent)
    }

    override fun onResume() {
        super.onResume()
        resumed = true
    }

    override fun onPause() {
        resumed = false
        super.onPause()
    }

    /** A locked or dark screen would leave the app in the background, throttled by the platform. */
    private fun showOverKeyguard() {
        if (Build.VERSION.SDK_INT >= Build.VERSION_CODES.O_MR1) {
            setShowWhenLocked(true)
            setTurnScreenOn(true)
        } else {
            @Suppress("DEPRECATION")
            window.addFlags(WindowManager.LayoutParams.FLAG_SHOW_WHEN_LOCKED or WindowManager.LayoutParams.FLAG_TURN_SCREEN_ON)
        }
        if (Build.VERSION.SDK_INT >= Build.VERSION_CODES.O) {
            (getSystemService(Context.KEYGUARD_SERVICE) as KeyguardManager).requestDismissKeyguard(this, null)
        }
    }

    override fun onNewIntent(intent: Intent) {
        super.onNewIntent(intent)
        start(intent)
    }

    private fun start(intent: Intent) {
        // One benchmark per process at a time: a second launch while one runs would compete for
        // the same cores and corrupt both measurements. The host always uses `am start -S`.
        if (!RUNNING.compareAndSet(false, true)) {
            Log.w(TAG, "benchmark already running; ignoring the new intent")
            return
        }
        val extras = extrasOf(intent)
        status.text = "NNLite Bench ${Report.APP_VERSION}\nrunning ${extras["run_id"] ?: ""}"
        val wakeLock = (getSystemService(POWER_SERVICE) as PowerManager)
            .newWakeLock(PowerManager.PARTIAL_WAKE_LOCK, "NNLiteBench:run")
            .apply { setReferenceCounted(false) }
        wakeLock.acquire(WAKE_LOCK_TIMEOUT_MS)
        Thread({
            Process.setThreadPriority(Process.THREAD_PRIORITY_FOREGROUND)
            val line = try {
                val battery = AndroidBattery(this)
                val meter = EnergyMeter(
                    battery,
                    ThreadSampler(battery, { System.nanoTime() }, EnergyRun.SAMPLE_PERIOD_MS * 1_000_000),
                    { ns -> Thread.sleep(ns / 1_000_000, (ns % 1_000_000).toInt()) },
                )
                val result = BenchRunner(
                    AppRuntimes.all(), ::deviceInfo, LogcatLog,
                    probe = AndroidProbe(this, { resumed }, sustained), meter = meter,
                ).execute(extras)
                when {
                    result.written -> "report ${result.reportPath} valid=${result.report?.get("valid")}"
                    result.reportPath == null -> "no report: report_path missing (see logcat -s $TAG)"
                    else -> "report could not be written to ${result.reportPath} (see logcat -s $TAG)"
                }
            } catch (t: Throwable) {
                // BenchRunner turns every failure into a report; reaching here is a bug in it.
                Log.e(TAG, "ERROR stage=internal type=${t::class.java.name} message=${t.message}", t)
                "failed: $t"
            } finally {
                wakeLock.release()
                RUNNING.set(false)
            }
            runOnUiThread {
                status.text = "NNLite Bench ${Report.APP_VERSION}\n$line"
                finishAndRemoveTask()
            }
        }, "nnlite-bench").start()
    }

    private fun extrasOf(intent: Intent): Map<String, Any?> {
        val bundle = intent.extras ?: return emptyMap()
        @Suppress("DEPRECATION") // typed getters need the type; the core checks the types itself
        return bundle.keySet().associateWith { bundle.get(it) }
    }

    companion object {
        private val RUNNING = AtomicBoolean(false)

        /** Upper bound on holding the CPU awake, should the worker hang in native code. */
        private const val WAKE_LOCK_TIMEOUT_MS = 2 * 60 * 60 * 1000L
    }
}
