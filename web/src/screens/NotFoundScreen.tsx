import { AuthLayout } from '../components/AuthLayout';
import { Link } from '../components/Link';
import { routePath } from '../router';

export function NotFoundScreen() {
  return (
    <AuthLayout title="Page not found" lead="There is nothing at this address.">
      <Link class="btn btn-primary btn-block" href={routePath({ name: 'home' })}>
        Go to Crewhost
      </Link>
    </AuthLayout>
  );
}
