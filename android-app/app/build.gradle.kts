// The benchmark app: one activity started by `am start` (PROTOCOL.md). AGP 9 compiles the Kotlin
// sources itself (built-in Kotlin), so no Kotlin plugin is applied here.
plugins {
    alias(libs.plugins.android.application)
}

android {
    namespace = "org.nnlite.bench"
    compileSdk = 36

    defaultConfig {
        applicationId = "org.nnlite.bench"
        // 26, not lower: ExecuTorch's AAR declares minSdk 23, but its release script builds the native
        // library for android-26 (scripts/build_android_library.sh), and TfliteLog uses Process.waitFor(long, TimeUnit)
        // (API 26). An API 24/25 device could install the APK and then fail to load the runtime.
        minSdk = 26
        targetSdk = 36
        versionCode = 3
        versionName = "0.3.0" // must equal Report.APP_VERSION in :core (checked by tests/android)
    }

    buildTypes {
        release {
            // Not minified: LiteRT loads classes from native code by name, and the APK is a tool.
            isMinifyEnabled = false
        }
    }

    compileOptions {
        sourceCompatibility = JavaVersion.VERSION_17
        targetCompatibility = JavaVersion.VERSION_17
    }

    packaging {
        jniLibs {
            // Keep LiteRT's and ExecuTorch's .so files uncompressed and page-aligned (loaded straight from the APK).
            useLegacyPackaging = false
        }
    }
}

dependencies {
    implementation(project(":core"))
    implementation(libs.litert)
    implementation(libs.litert.gpu)
    implementation(libs.litert.gpu.api)
    // ExecuTorch's Module API with its XNNPACK delegate (arm64-v8a and x86_64 only); its POM brings fbjni and
    // soloader's nativeloader.
    implementation(libs.executorch.android)
}
