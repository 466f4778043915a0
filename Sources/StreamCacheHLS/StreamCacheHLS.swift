// StreamCacheHLS: m3u8 model, parser and writer, variant and rendition selection, the offline
// downloader and the asset library (DESIGN.md §8). The module exists so that apps can depend on
// it by name; its types arrive with the HLS work.
import StreamCache
