"""Review 16: the pair shrinkage (shrink_interaction's formula, vectorized) against the raw noisy
table on 400 random 2-way tables (dof 3-16, 20-10,000 records, sigma 3-30; 4,000 noise draws
each): the 5 tables where shrinking lost most, as (mean excess squared error over r c sigma^2,
its z score, r, c, n, sigma).  Not private: synthetic tables only."""
import numpy as np
def shrink(Y,sigma):  # vectorized over first axis
    tot=Y.sum((1,2)); e=np.einsum('ki,kj->kij',Y.sum(2),Y.sum(1))/tot[:,None,None]
    z=Y-e; dof=(Y.shape[1]-1)*(Y.shape[2]-1); en=(z**2).sum((1,2))
    c=np.maximum(0,1-(dof-2)*sigma**2/en); return e+c[:,None,None]*z
rs=np.random.default_rng(5); rng=np.random.default_rng(1)
worst=[]
for trial in range(400):
    r,c=[(2,4),(4,2),(3,3),(2,5),(3,4),(5,5)][trial%6]
    N=float(rs.choice([20,100,1000,10000])); sigma=float(rs.choice([3,10,30]))
    t=rs.dirichlet(np.full(r*c, rs.choice([0.1,0.5,3.0]))).reshape(r,c)*N
    Y=t+rng.normal(0,sigma,(4000,r,c))
    ok=Y.sum((1,2))>0; Y=Y[ok]
    d=((shrink(Y,sigma)-t)**2).sum((1,2))-((Y-t)**2).sum((1,2))
    worst.append((d.mean()/(r*c*sigma**2), d.mean()/(d.std()/np.sqrt(len(d))), r,c,N,sigma, t.round(1).tolist()))
worst.sort(key=lambda w:-w[1])
for w in worst[:5]: print(w[:6]); 
print(worst[0][6])
