// What every format's model shares (a resolution, a bitrate), for the users of this one.
@_exported import StreamCacheMediaModel
