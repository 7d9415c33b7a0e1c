// Signature stub of ExecuTorch's Android API (org.pytorch:executorch-android 1.5); see Module.kt here.
package org.pytorch.executorch

class MethodMetadata internal constructor(val name: String, val backends: Array<String>)
