/** zod with OpenAPI metadata: the schemas that validate requests also generate /api/openapi.json. */
import { z } from 'zod';
import { extendZodWithOpenApi, OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';

extendZodWithOpenApi(z);

export { z };
export const newRegistry = (): OpenAPIRegistry => new OpenAPIRegistry();
