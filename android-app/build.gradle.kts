// Root build: plugin versions only (gradle/libs.versions.toml). Declaring the Kotlin JVM plugin
// here also puts that Kotlin Gradle plugin on the classpath, so AGP's built-in Kotlin in :app
// compiles with the same Kotlin as :core.
plugins {
    alias(libs.plugins.android.application) apply false
    alias(libs.plugins.kotlin.jvm) apply false
}
