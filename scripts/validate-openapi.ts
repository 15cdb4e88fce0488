/** Validates an OpenAPI file with @apidevtools/swagger-parser (a second, independent validator). */
import SwaggerParser from "@apidevtools/swagger-parser";

const file = process.argv[2] ?? "build/openapi.json";
try {
  const api = await SwaggerParser.validate(file);
  console.log(`swagger-parser: ${file} is valid (${Object.keys(api.paths ?? {}).length} paths)`);
} catch (error) {
  console.error(`swagger-parser: ${file} is not valid: ${(error as Error).message}`);
  process.exit(1);
}
