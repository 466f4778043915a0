/// The example playlists of RFC 8216 section 8 (line continuations joined).
enum RFC8216Examples {
    static let simpleMedia = """
        #EXTM3U
        #EXT-X-TARGETDURATION:10
        #EXT-X-VERSION:3
        #EXTINF:9.009,
        http://media.example.com/first.ts
        #EXTINF:9.009,
        http://media.example.com/second.ts
        #EXTINF:3.003,
        http://media.example.com/third.ts
        #EXT-X-ENDLIST
        """

    static let liveMedia = """
        #EXTM3U
        #EXT-X-VERSION:3
        #EXT-X-TARGETDURATION:8
        #EXT-X-MEDIA-SEQUENCE:2680

        #EXTINF:7.975,
        https://priv.example.com/fileSequence2680.ts
        #EXTINF:7.941,
        https://priv.example.com/fileSequence2681.ts
        #EXTINF:7.975,
        https://priv.example.com/fileSequence2682.ts
        """

    static let encrypted = """
        #EXTM3U
        #EXT-X-VERSION:3
        #EXT-X-MEDIA-SEQUENCE:7794
        #EXT-X-TARGETDURATION:15

        #EXT-X-KEY:METHOD=AES-128,URI="https://priv.example.com/key.php?r=52"

        #EXTINF:2.833,
        http://media.example.com/fileSequence52-A.ts
        #EXTINF:15.0,
        http://media.example.com/fileSequence52-B.ts
        #EXTINF:13.333,
        http://media.example.com/fileSequence52-C.ts

        #EXT-X-KEY:METHOD=AES-128,URI="https://priv.example.com/key.php?r=53"

        #EXTINF:15.0,
        http://media.example.com/fileSequence53-A.ts
        """

    static let multivariant = """
        #EXTM3U
        #EXT-X-STREAM-INF:BANDWIDTH=1280000,AVERAGE-BANDWIDTH=1000000
        http://example.com/low.m3u8
        #EXT-X-STREAM-INF:BANDWIDTH=2560000,AVERAGE-BANDWIDTH=2000000
        http://example.com/mid.m3u8
        #EXT-X-STREAM-INF:BANDWIDTH=7680000,AVERAGE-BANDWIDTH=6000000
        http://example.com/hi.m3u8
        #EXT-X-STREAM-INF:BANDWIDTH=65000,CODECS="mp4a.40.5"
        http://example.com/audio-only.m3u8
        """

    static let iFrames = """
        #EXTM3U
        #EXT-X-STREAM-INF:BANDWIDTH=1280000
        low/audio-video.m3u8
        #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=86000,URI="low/iframe.m3u8"
        #EXT-X-STREAM-INF:BANDWIDTH=2560000
        mid/audio-video.m3u8
        #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=150000,URI="mid/iframe.m3u8"
        #EXT-X-STREAM-INF:BANDWIDTH=7680000
        hi/audio-video.m3u8
        #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=550000,URI="hi/iframe.m3u8"
        #EXT-X-STREAM-INF:BANDWIDTH=65000,CODECS="mp4a.40.5"
        audio-only.m3u8
        """

    static let alternativeAudio = """
        #EXTM3U
        #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac",NAME="English",DEFAULT=YES,AUTOSELECT=YES,LANGUAGE="en",URI="main/english-audio.m3u8"
        #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac",NAME="Deutsch",DEFAULT=NO,AUTOSELECT=YES,LANGUAGE="de",URI="main/german-audio.m3u8"
        #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac",NAME="Commentary",DEFAULT=NO,AUTOSELECT=NO,LANGUAGE="en",URI="commentary/audio-only.m3u8"
        #EXT-X-STREAM-INF:BANDWIDTH=1280000,CODECS="...",AUDIO="aac"
        low/video-only.m3u8
        #EXT-X-STREAM-INF:BANDWIDTH=2560000,CODECS="...",AUDIO="aac"
        mid/video-only.m3u8
        #EXT-X-STREAM-INF:BANDWIDTH=7680000,CODECS="...",AUDIO="aac"
        hi/video-only.m3u8
        #EXT-X-STREAM-INF:BANDWIDTH=65000,CODECS="mp4a.40.5",AUDIO="aac"
        main/english-audio.m3u8
        """

    static let alternativeVideo = """
        #EXTM3U
        #EXT-X-MEDIA:TYPE=VIDEO,GROUP-ID="low",NAME="Main",DEFAULT=YES,URI="low/main/audio-video.m3u8"
        #EXT-X-MEDIA:TYPE=VIDEO,GROUP-ID="low",NAME="Centerfield",DEFAULT=NO,URI="low/centerfield/audio-video.m3u8"
        #EXT-X-MEDIA:TYPE=VIDEO,GROUP-ID="low",NAME="Dugout",DEFAULT=NO,URI="low/dugout/audio-video.m3u8"
        #EXT-X-STREAM-INF:BANDWIDTH=1280000,CODECS="...",VIDEO="low"
        low/main/audio-video.m3u8
        #EXT-X-MEDIA:TYPE=VIDEO,GROUP-ID="mid",NAME="Main",DEFAULT=YES,URI="mid/main/audio-video.m3u8"
        #EXT-X-MEDIA:TYPE=VIDEO,GROUP-ID="mid",NAME="Centerfield",DEFAULT=NO,URI="mid/centerfield/audio-video.m3u8"
        #EXT-X-MEDIA:TYPE=VIDEO,GROUP-ID="mid",NAME="Dugout",DEFAULT=NO,URI="mid/dugout/audio-video.m3u8"
        #EXT-X-STREAM-INF:BANDWIDTH=2560000,CODECS="...",VIDEO="mid"
        mid/main/audio-video.m3u8
        #EXT-X-MEDIA:TYPE=VIDEO,GROUP-ID="hi",NAME="Main",DEFAULT=YES,URI="hi/main/audio-video.m3u8"
        #EXT-X-MEDIA:TYPE=VIDEO,GROUP-ID="hi",NAME="Centerfield",DEFAULT=NO,URI="hi/centerfield/audio-video.m3u8"
        #EXT-X-MEDIA:TYPE=VIDEO,GROUP-ID="hi",NAME="Dugout",DEFAULT=NO,URI="hi/dugout/audio-video.m3u8"
        #EXT-X-STREAM-INF:BANDWIDTH=7680000,CODECS="...",VIDEO="hi"
        hi/main/audio-video.m3u8
        #EXT-X-STREAM-INF:BANDWIDTH=65000,CODECS="mp4a.40.5"
        main/audio-only.m3u8
        """

    static let sessionData = """
        #EXTM3U
        #EXT-X-SESSION-DATA:DATA-ID="com.example.lyrics",URI="lyrics.json"
        #EXT-X-SESSION-DATA:DATA-ID="com.example.title",LANGUAGE="en", VALUE="This is an example"
        #EXT-X-SESSION-DATA:DATA-ID="com.example.title",LANGUAGE="es", VALUE="Este es un ejemplo"
        """

    static let all = [
        simpleMedia, liveMedia, encrypted, multivariant, iFrames, alternativeAudio, alternativeVideo, sessionData,
    ]
}
