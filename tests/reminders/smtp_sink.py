"""A real SMTP server for the reminder tests (Debian's python3-aiosmtpd): listens on 127.0.0.1 on
a free port, prints that port, and keeps every message it accepts as one file in the directory
given, named by arrival order, the envelope's recipients on its first line."""
import asyncio
import os
import sys

from aiosmtpd.smtp import SMTP


class Keep:
    def __init__(self, directory):
        self.directory = directory
        self.count = 0

    async def handle_DATA(self, server, session, envelope):
        self.count += 1
        path = os.path.join(self.directory, f"{self.count:07d}.eml")
        with open(path + ".part", "wb") as out:
            out.write(("X-Envelope-To: " + ",".join(envelope.rcpt_tos) + "\r\n").encode())
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
