package org.nnlite.bench

import android.os.Process
import org.nnlite.bench.core.Delegation
import java.io.IOException
import java.util.concurrent.TimeUnit

/**
 * LiteRT's own log lines (tag `tflite`) of this process, read with `logcat -d`: an app may read
 * its own log without any permission. The delegation line ("Replacing N out of M node(s) with
 * delegate ...") is the only place the runtime says how much of the graph a delegate took.
 */
object TfliteLog {
    /**
     * This process's `tflite` messages logged at or after [sinceMs] (epoch ms); throws IOException
     * when logcat cannot be run.
     */
    fun since(sinceMs: Long): List<String> {
        val proc = ProcessBuilder("logcat", "-d", "-v", "epoch", "--pid=${Process.myPid()}", "-s", "${Delegation.LOG_TAG}:V")
            .redirectErrorStream(true).start()
        val text = proc.inputStream.bufferedReader().use { it.readText() }
        if (!proc.waitFor(10, TimeUnit.SECONDS)) {
            proc.destroy()
            throw IOException("logcat did not finish within 10 s")
        }
        return Delegation.messagesSince(text, sinceMs)
    }
}
