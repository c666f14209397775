"""fwembed: build-time firmware embedding for Linux kernels."""

__version__ = "0.6.0"
