"""The everyday operations on memories, and the rules every stored text obeys.

``operations`` (remember, get, list, update, forget, delete, link, status),
``privacy`` (secrets and ``<private>`` text never stored), ``timeparse``
(``--since`` spans).
"""
