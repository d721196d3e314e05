// Generate schema.ts from openapi.yaml with openapi-typescript, as an IDE plugin would:
//   node generate.mjs <openapi.yaml> <schema.ts>
// A `format: binary` string (a file's bytes, both ways) becomes a Blob, the recipe of openapi-typescript's
// docs: its CLI types it as `string`, and fetch would then send text. A field with a default is optional
// (defaultNonNullable: false): by default openapi-typescript makes it required, in request bodies too.
import { writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import openapiTS, { astToString } from "openapi-typescript";
import ts from "typescript";

const [spec, out] = process.argv.slice(2);
const BLOB = ts.factory.createTypeReferenceNode(ts.factory.createIdentifier("Blob"));
const ast = await openapiTS(pathToFileURL(spec), {
  defaultNonNullable: false,
  transform: (schema) => (schema.format === "binary" ? BLOB : undefined),
});
writeFileSync(out, astToString(ast));
