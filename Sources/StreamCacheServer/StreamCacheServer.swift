// StreamCacheServer: the loopback caching proxy behind `streamcache serve` (DESIGN.md §6). The
// module exists so that apps can depend on it by name; its types arrive with the proxy work.
import StreamCache
