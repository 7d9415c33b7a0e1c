package org.nnlite.bench

import org.nnlite.bench.core.Runtime
import org.nnlite.bench.core.RuntimeProvider
import org.nnlite.bench.core.Runtimes

/**
 * The runtimes this build packages, with the versions of their Gradle dependencies
 * (gradle/libs.versions.toml; tests/android checks that they agree). Every report announces them
 * (`capabilities`), so the host refuses a unit this app cannot run.
 */
object AppRuntimes {
    const val LITERT_VERSION = "1.4.2"
    const val EXECUTORCH_VERSION = "1.5.1"

    fun all(): Runtimes = Runtimes(listOf(
        RuntimeProvider(Runtime.LITERT, LITERT_VERSION) { LiteRtEngine() },
        // BenchArgs refuses an executorch request without input_shapes, so the spec is always there.
        RuntimeProvider(Runtime.EXECUTORCH, EXECUTORCH_VERSION) { request -> ExecuTorchEngine(request.inputSpec!!) },
    ))
}
