// Signature stub of ExecuTorch's Android API (org.pytorch:executorch-android 1.5), for the type check in
// test-core.sh; never packaged. Public members of executorch_android/.../org/pytorch/executorch/Module.kt
// (stubs/README.md says which commit). Private, native and JNI members are left out.
package org.pytorch.executorch

import java.io.Closeable

open class Module private constructor() : Closeable {
    open fun forward(vararg inputs: EValue): Array<EValue> = stub()

    open fun execute(methodName: String, vararg inputs: EValue): Array<EValue> = stub()

    open fun loadMethod(methodName: String): Unit = stub()

    open fun getMethods(): Array<String> = stub()

    open fun getMethodMetadata(name: String): MethodMetadata = stub()

    open fun readLogBuffer(): Array<String>? = stub()

    open fun etdump(): Boolean = stub()

    open fun etdump(outputPath: String): Boolean = stub()

    open fun destroy(): Unit = stub()

    override fun close(): Unit = stub()

    companion object {
        const val LOAD_MODE_FILE = 0
        const val LOAD_MODE_MMAP = 1
        const val LOAD_MODE_MMAP_USE_MLOCK = 2
        const val LOAD_MODE_MMAP_USE_MLOCK_IGNORE_ERRORS = 3

        @JvmStatic
        @JvmOverloads
        fun load(modelPath: String?, loadMode: Int = LOAD_MODE_FILE, numThreads: Int = 0): Module = stub()

        @JvmStatic fun readLogBufferStatic(): Array<String>? = stub()
    }
}
