import { StatusError, methodNotAllowed as base } from '../status.js';

export const notFoundPathFor = (): StatusError => new StatusError(404, 'NotFound', 'the server could not find the requested resource', {});
export const methodNotAllowed = (message = 'the server does not allow this method on the requested resource'): StatusError => base(message);
