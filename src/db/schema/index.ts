export * from "./clinics";
export * from "./operations";
export * from "./billing";
export * from "./mcp";
export * from "./quotas";
export * from "./clinical";
export * from "./oauth";
export * from "./events";
