import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

// A benchmark peer, not part of StreamCache: the leanest relay on the parts `serve` is built
// on (SwiftNIO's server, AsyncHTTPClient), with no cache. `GET /http://HOST:PORT/PATH` is asked
// of the origin on the connection's own event loop and answered whole, so what `bench/many.sh`
// measures of it is what those parts cost a request; the rest of `serve`'s cost is the cache's.
//
//     relay-floor      (prints "listening on http://127.0.0.1:PORT", then serves until killed)

let group = MultiThreadedEventLoopGroup.singleton
let client = HTTPClient(eventLoopGroupProvider: .shared(group))

/// Relays each request's answer, whole, with the origin's status and content type.
final class RelayHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(let head) = unwrapInboundIn(data) else { return }
        let channel = context.channel
        guard head.method == .GET, let request = try? HTTPClient.Request(url: String(head.uri.dropFirst())) else {
            Self.answer(on: channel, status: .badRequest, type: nil, body: ByteBuffer())
            return
        }
        client.execute(request: request, eventLoop: .delegate(on: context.eventLoop)).whenComplete { result in
            switch result {
            case .success(let response):
                Self.answer(
                    on: channel,
                    status: response.status,
                    type: response.headers.first(name: "Content-Type"),
                    body: response.body ?? ByteBuffer()
                )
            case .failure:
                Self.answer(on: channel, status: .badGateway, type: nil, body: ByteBuffer())
            }
        }
    }

    private static func answer(on channel: any Channel, status: HTTPResponseStatus, type: String?, body: ByteBuffer) {
        var headers: HTTPHeaders = ["Content-Length": String(body.readableBytes)]
        if let type { headers.add(name: "Content-Type", value: type) }
        channel.write(HTTPServerResponsePart.head(.init(version: .http1_1, status: status, headers: headers)), promise: nil)
        channel.write(HTTPServerResponsePart.body(.byteBuffer(body)), promise: nil)
        channel.writeAndFlush(HTTPServerResponsePart.end(nil), promise: nil)
    }
}

let server = try ServerBootstrap(group: group)
    .serverChannelOption(ChannelOptions.backlog, value: 256)
    .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
    .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.configureHTTPServerPipeline()
            try channel.pipeline.syncOperations.addHandler(RelayHandler())
        }
    }
    .bind(host: "127.0.0.1", port: 0)
    .wait()
print("listening on http://127.0.0.1:\(server.localAddress?.port ?? 0)")
fflush(nil)
try server.closeFuture.wait()
