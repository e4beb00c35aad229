"""Moving memories between stores: the record format (``records``) used by export and
import, and the git repository of YAML files that ``memctl sync`` shares."""
