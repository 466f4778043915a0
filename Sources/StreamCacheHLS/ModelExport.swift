// The playlist model, parser and writer, for the users of HLS packages.
@_exported import StreamCacheHLSModel
