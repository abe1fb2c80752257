// The floor for bench/ping-rtt.ts: a Bun TCP server that echoes every chunk it
// receives (a ping frame arrives whole on loopback). Prints its port on stdout.

const listener = Bun.listen({
  hostname: "127.0.0.1",
  port: 0,
  socket: {
    open(socket) {
      socket.setNoDelay(true);
    },
    data(socket, chunk) {
      socket.write(chunk);
    },
  },
});
console.log(`echo listening on 127.0.0.1:${listener.port}`);
