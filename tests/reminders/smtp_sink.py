"""A real SMTP server for the reminder tests (Debian's python3-aiosmtpd): listens on 127.0.0.1 on
a free port, prints that port, and keeps every message it accepts as one file in the directory
given, named by arrival order, the envelope's recipients and the moment of acceptance first.

While a file HOLD exists in that directory, replies to DATA wait. A message is accepted only when
its 250 reply goes out on a live connection: one whose sender died while waiting is not kept,
as RFC 5321 has it (the server takes responsibility with its reply)."""
import asyncio
import os
import sys
import time

from aiosmtpd.smtp import SMTP


class Keep:
    def __init__(self, directory):
        self.directory = directory
        self.count = 0

    async def handle_DATA(self, server, session, envelope):
        while os.path.exists(os.path.join(self.directory, "HOLD")):
            await asyncio.sleep(0.01)
        if server.transport is None or server.transport.is_closing():
            return "421 The sender is gone"
        self.count += 1
        path = os.path.join(self.directory, f"{self.count:07d}.eml")
        with open(path + ".part", "wb") as out:
            out.write(("X-Envelope-To: " + ",".join(envelope.rcpt_tos) + "\r\n").encode())
            out.write(("X-Received-At: %.3f\r\n" % time.time()).encode())
            out.write(envelope.original_content or envelope.content)
        os.rename(path + ".part", path)
        return "250 Message accepted for delivery"


async def main():
    handler = Keep(sys.argv[1])
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: SMTP(handler, hostname="sink.test", auth_require_tls=False), "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    await server.serve_forever()


asyncio.run(main())
