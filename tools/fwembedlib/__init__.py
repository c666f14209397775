"""fwembed: build-time firmware embedding for Linux kernels."""
