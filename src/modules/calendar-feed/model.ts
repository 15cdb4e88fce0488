import { t } from "elysia";
import { Timestamp, Uuid } from "../../http/common-model";

export const FeedUserParams = t.Object({ id: Uuid });

/** The feed's secret token followed by `.ics`; a malformed one is refused before any lookup. */
export const FeedParams = t.Object({
  token: t.String({ pattern: "^[A-Za-z0-9_-]{43}\\.ics$", description: "The feed's secret token followed by .ics", examples: ["q3Jx0c8vQm2Yw1kT5bZr9nHs4dLp7fGa6eUi0oNjXyA.ics"] }),
});

export const FeedStatusModel = t.Object({
  active: t.Boolean({ description: "Whether the person has a feed" }),
  created_at: t.Union([Timestamp, t.Null()], { description: "When its current address was made" }),
});
export type FeedStatusView = typeof FeedStatusModel.static;

export const CreatedFeedModel = t.Object({
  url: t.String({ description: "The feed's secret address (https), shown only now; a new address replaces it" }),
  webcal_url: t.String({ description: "The same address with the webcal: scheme, which calendar apps open as a subscription" }),
  created_at: Timestamp,
});
export type CreatedFeedView = typeof CreatedFeedModel.static;
