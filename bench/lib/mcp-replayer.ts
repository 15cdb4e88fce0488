/**
 * The HTTP transport's floor for an MCP server: answers every tools/call with the recorded
 * result given as the argument, doing no work.
 */
import { serveBareMcp } from "./bare-mcp";

const result = process.argv[2] ?? '{"content":[]}';
serveBareMcp(() => result);
