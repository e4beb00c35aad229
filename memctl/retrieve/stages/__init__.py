"""The recall stages, one module each, in pipeline order (see ``memctl.retrieve.pipeline``)."""
