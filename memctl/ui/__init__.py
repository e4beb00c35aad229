"""The local viewer (``memctl ui``): server-rendered pages over ``memctl.api``.

``app`` holds the routes and the checks every request passes (``security``), ``views``
one function per page or change, ``server`` the loopback server the command starts.
It imports nothing below ``memctl.api`` but the error types (tests/test_architecture.py).
"""
