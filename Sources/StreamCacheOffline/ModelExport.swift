// The playlist model, parser and writer are a module of their own, pure (no engine, no crypto):
// the proxy's rewriting and the offline downloader build on it, and so will other formats'.
@_exported import StreamCacheHLSModel
