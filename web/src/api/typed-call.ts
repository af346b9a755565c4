/**
 * A typed call on the hub's API: the path, its parameters, its JSON body and its answer
 * all come from the generated `schema.d.ts`, so a change on the server breaks the build here.
 */

import { apiRequest } from './client';
import type { paths } from './schema';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

type Operation<P extends keyof paths, M extends Method> =
  paths[P][M] extends infer O ? (O extends { responses: unknown } ? O : never) : never;

type PathParams<O> = O extends { parameters: { path: infer Q } } ? Q : undefined;

type JsonBody<O> = O extends { requestBody: { content: { 'application/json': infer B } } }
  ? B
  : undefined;

type SuccessReply<O> = O extends { responses: infer R }
  ? R[Extract<keyof R, 200 | 201 | 204>]
  : never;

/** The JSON answer of an operation; `void` when it answers 204 or not with JSON. */
export type JsonReply<O> =
  [SuccessReply<O>] extends [{ content: { 'application/json': infer J } }] ? J : void;

export type CallArgs<O> = (PathParams<O> extends undefined
  ? { params?: undefined }
  : { params: PathParams<O> }) &
  (JsonBody<O> extends undefined ? { json?: undefined } : { json: JsonBody<O> }) & {
    raw?: Blob;
    signInOn401?: boolean;
  };

/** The path with its `{name}` placeholders filled from the parameters of the same names. */
export function fillPath(template: string, params: Record<string, string> | undefined): string {
  return template.replace(/\{([a-z0-9_]+)\}/g, (_match, name: string) => {
    const value = params?.[name];
    if (value === undefined) throw new Error(`missing path parameter ${name} for ${template}`);
    return encodeURIComponent(value);
  });
}

export async function call<P extends keyof paths, M extends Method>(
  method: M,
  path: P,
  args: CallArgs<Operation<P, M>>,
): Promise<JsonReply<Operation<P, M>>> {
  const { params, json, raw, signInOn401 } = args as {
    params?: Record<string, string>;
    json?: unknown;
    raw?: Blob;
    signInOn401?: boolean;
  };
  const url = fillPath(path, params);
  return (await apiRequest(method, url, { json, raw, signInOn401 })) as JsonReply<
    Operation<P, M>
  >;
}
