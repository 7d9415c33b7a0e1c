// Not part of ExecuTorch: the body every signature stub in this package returns (never run).
package org.pytorch.executorch

internal fun stub(): Nothing = throw UnsupportedOperationException("API signature stub, never packaged")
