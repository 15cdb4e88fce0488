import { Elysia } from "elysia";
import type { AppContext } from "../../context";
import { errorResponses } from "../../http/common-model";
import { CursorPage } from "../../http/pagination";
import { BoardQuery, BoardVisit } from "./model";
import { BOARD_KEYSET, boardPage, boardView } from "./service";

export const operationsModule = ({ auth, services, paginator }: AppContext) =>
  new Elysia({ prefix: "/operations", tags: ["operations"] as never })
    .use(auth)
    .get(
      "/visits",
      ({ actor, query }) => paginator.list(query, BOARD_KEYSET, (page) => boardPage(services, actor.clinicId, actor.clinic.timezone, query, page), boardView),
      {
        auth: true,
        query: BoardQuery,
        response: { 200: CursorPage(BoardVisit), ...errorResponses(400, 401, 422) },
        detail: { summary: "The operations board: visits by scheduled time with patient and tutor summaries" },
      },
    );
