"""The everyday operations on memories, and the rules every stored text obeys.

``operations`` (remember, get, list, update, forget, delete, link, status),
``writes`` (the one write path: every change with its event and its revert),
``privacy`` (secrets and ``<private>`` text never stored), ``timeparse``
(``--since`` spans).
"""
