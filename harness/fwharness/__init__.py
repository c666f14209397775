"""The fwembed test harness: boot boards in QEMU, judge their console logs.

It stands apart from the product (tools/fwembedlib), as the kernel's
kunit.py stands apart from Kbuild: it imports the product's modules (board
folders, manifests, errors), and the product never imports it.
"""
