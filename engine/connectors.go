package engine

// builtinConnectors returns the ingest connectors every engine has.
func builtinConnectors() map[string]Connector {
	return map[string]Connector{}
}
