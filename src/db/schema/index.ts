export * from "./clinics";
export * from "./operations";
export * from "./billing";
export * from "./mcp";
export * from "./sii";
